package org.tensorcache.store.segment;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.tensorcache.store.io.AtomicFiles;
import org.tensorcache.store.io.DataRegionWriter;

/**
 * Writes a safetensors file: the data region streamed first, then the length prefix and the
 * canonical header in front of it, carrying the data's CRC32C in the metadata key {@code crc32c}.
 */
public final class SafetensorsWriter {
  private SafetensorsWriter() {}

  /** Streams a file's data region; the writer keeps its CRC32C. */
  @FunctionalInterface
  public interface DataWriter {
    /** Writes every tensor's bytes, in header order, to {@code out}. */
    void write(DataRegionWriter out) throws IOException;
  }

  /**
   * Writes a safetensors file crash-safely (temp file, fsync, rename, directory fsync): {@code
   * data} streams the data region, then the header goes in front of it with the data's CRC32C in
   * the metadata key {@code crc32c}. The CRC is fixed-width hex, so the header's length is known
   * before the data is written.
   */
  public static void writeFile(
      Path file, List<TensorInfo> tensors, Map<String, String> metadata, DataWriter data)
      throws IOException {
    AtomicFiles.write(file, ch -> writeTo(ch, tensors, metadata, data));
  }

  /** Writes the same bytes as {@link #writeFile} to {@code ch} from position 0, as they come. */
  public static void writeTo(
      FileChannel ch, List<TensorInfo> tensors, Map<String, String> metadata, DataWriter data)
      throws IOException {
    writeTo(ch::write, tensors, metadata, data);
  }

  /** The same bytes as {@link #writeFile}, in memory. */
  public static byte[] encode(
      List<TensorInfo> tensors, Map<String, String> metadata, DataWriter data) throws IOException {
    long size = 8L + headerLength(tensors, metadata) + TensorInfo.dataLength(tensors);
    byte[] bytes = new byte[Math.toIntExact(size)];
    DataRegionWriter.Target into =
        (src, position) -> {
          int n = src.remaining();
          src.get(bytes, Math.toIntExact(position), n);
          return n;
        };
    writeTo(into, tensors, metadata, data);
    return bytes;
  }

  private static void writeTo(
      DataRegionWriter.Target to,
      List<TensorInfo> tensors,
      Map<String, String> metadata,
      DataWriter data)
      throws IOException {
    var out =
        new DataRegionWriter(
            to, 8L + headerLength(tensors, metadata), TensorInfo.dataLength(tensors));
    data.write(out);
    out.flush();
    Map<String, String> meta = new LinkedHashMap<>(metadata);
    meta.put("crc32c", crcHex(out.crc32c()));
    writePrefixAndHeader(to, SafetensorsJson.encode(tensors, meta));
  }

  /** The header's length, known before the data: the CRC is fixed-width hex. */
  private static int headerLength(List<TensorInfo> tensors, Map<String, String> metadata) {
    Map<String, String> meta = new LinkedHashMap<>(metadata);
    meta.put("crc32c", crcHex(0));
    return SafetensorsJson.encode(tensors, meta).length;
  }

  /** A CRC32C as 8 lowercase hex digits, the form of the {@code crc32c} metadata value. */
  public static String crcHex(int crc) {
    return String.format("%08x", crc);
  }

  /** Writes the length prefix and {@code header} at the start of the file. */
  private static void writePrefixAndHeader(DataRegionWriter.Target to, byte[] header)
      throws IOException {
    ByteBuffer buf = ByteBuffer.allocate(8 + header.length).order(ByteOrder.LITTLE_ENDIAN);
    buf.putLong(header.length).put(header).flip();
    long pos = 0;
    while (buf.hasRemaining()) {
      pos += to.write(buf, pos);
    }
  }
}
