package org.tensorcache.store.export;

import static org.tensorcache.store.segment.SafetensorsChecks.expect;
import static org.tensorcache.store.segment.SafetensorsChecks.reject;
import static org.tensorcache.store.segment.SafetensorsWriter.crcHex;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.EOFException;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.tensorcache.fields.DType;
import org.tensorcache.fields.FieldSpec;
import org.tensorcache.store.block.Block;
import org.tensorcache.store.io.DataRegionReader;
import org.tensorcache.store.segment.SafetensorsChecks;
import org.tensorcache.store.segment.SafetensorsJson;
import org.tensorcache.store.segment.SafetensorsReader;
import org.tensorcache.store.segment.SafetensorsWriter;
import org.tensorcache.store.segment.SegmentRejectedException;
import org.tensorcache.store.segment.SegmentRejectedException.Reason;
import org.tensorcache.store.segment.TensorInfo;
import org.tensorcache.store.spec.CacheSpec;
import org.tensorcache.store.spec.Fingerprint;

/**
 * Exports a whole cache as one safetensors file and imports it back.
 *
 * <p>Layout: one tensor of the field's dtype per field of shape {@code [n, ...fieldShape]} in spec
 * order (missing examples hold the dtype's sentinel: {@code -inf}, or the lowest integer), then
 * {@value #PRESENT}, {@code U8} of shape {@code [n]} holding 1 for a present example and 0 for a
 * missing one, so Python can mask with it directly. The metadata says which cache it is ({@code
 * cache_id}, {@code fingerprint}, {@code n}, {@code range_size}, {@code fields}, {@code crc32c})
 * and, under {@value #INPUTS}, what it was filled from, for a trainer to check.
 */
public final class CacheExport {
  /** The {@code format} metadata value of an export. */
  public static final String FORMAT = "tensorcache-export/1";

  /** Name of the unpacked presence tensor. */
  public static final String PRESENT = "__present__";

  /** The metadata key of the inputs the cache was filled from (a JSON object as a string). */
  public static final String INPUTS = "inputs";

  private static final List<String> KEYS =
      List.of("format", "cache_id", "fingerprint", "n", "range_size", "fields", INPUTS, "crc32c");

  /** Exports written before the inputs were recorded have no {@value #INPUTS}. */
  private static final Set<String> OPTIONAL = Set.of(INPUTS);

  private static final ObjectMapper JSON = new ObjectMapper();

  private CacheExport() {}

  /** Like {@link #write(Path, CacheSpec, Fingerprint, Map, Collection)}, with no inputs. */
  public static void write(
      Path file, CacheSpec spec, Fingerprint fingerprint, Collection<Block> blocks)
      throws IOException {
    write(file, spec, fingerprint, Map.of(), blocks);
  }

  /**
   * Atomically writes the cache to {@code file}, with the {@code inputs} it was filled from (for a
   * trainer to check; left out when empty). {@code blocks} holds at most one block per range; a
   * range without one is exported as missing.
   */
  public static void write(
      Path file,
      CacheSpec spec,
      Fingerprint fingerprint,
      Map<String, String> inputs,
      Collection<Block> blocks)
      throws IOException {
    fingerprint.checkBelongsTo(spec);
    spec.checkFixedShape("this export (RowExport writes per-token caches)");
    String inputsJson = inputs.isEmpty() ? null : ExportInputs.encode(inputs);
    Block[] byRange = new Block[spec.rangeCount()];
    for (Block b : blocks) {
      if (!b.spec().equals(spec)) {
        throw new IllegalArgumentException(
            "block of " + b.spec() + " in the export of " + spec + ", expected that spec");
      }
      if (byRange[b.range()] != null) {
        throw new IllegalArgumentException(
            "two blocks for range " + b.range() + ", expected at most one per range");
      }
      byRange[b.range()] = b;
    }
    List<TensorInfo> tensors = tensors(spec);
    Map<String, String> meta = metadata(spec, fingerprint, inputsJson, crcHex(0));
    SafetensorsWriter.writeFile(
        file,
        tensors,
        meta,
        out -> {
          for (int f = 0; f < spec.fields().size(); f++) {
            DType t = spec.fields().get(f).dtype();
            int width = spec.fields().get(f).width();
            Object chunk = t.newArray(1 << 16);
            for (int r = 0; r < byRange.length; r++) {
              int elements = spec.rangeLength(r) * width;
              if (byRange[r] == null) {
                out.putSentinels(t, elements);
                continue;
              }
              for (int from = 0; from < elements; from += 1 << 16) {
                int n = Math.min(1 << 16, elements - from);
                byRange[r].copyRawValues(f, from, chunk, 0, n);
                out.putElements(t, chunk, 0, n);
              }
            }
          }
          byte[] flags = new byte[spec.rangeSize()];
          for (int r = 0; r < byRange.length; r++) {
            int length = spec.rangeLength(r);
            long[] words = byRange[r] == null ? new long[0] : byRange[r].presenceWords();
            for (int i = 0; i < length; i++) {
              flags[i] = (byte) (words.length == 0 ? 0 : (words[i >>> 6] >>> i) & 1);
            }
            out.putBytes(flags, 0, length);
          }
        });
  }

  /**
   * Reads an export of the cache that {@code expected} identifies, with or without recorded inputs;
   * returns one block per range, in range order, with only the exported present examples present.
   * Any failed check throws {@link SegmentRejectedException}, a file of another fingerprint (or
   * whose inputs name another) with reason {@code FOREIGN_FINGERPRINT}.
   */
  public static List<Block> read(Path file, CacheSpec spec, Fingerprint expected)
      throws IOException {
    expected.checkBelongsTo(spec);
    List<TensorInfo> tensors = tensors(spec);
    try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
      long size = ch.size();
      byte[] header = SafetensorsReader.read(file, ch, size);
      ObjectNode root = SafetensorsJson.parse(file, header);
      Map<String, String> meta = SafetensorsChecks.metadata(file, root, KEYS, OPTIONAL);
      Map<String, String> want = metadata(spec, expected, meta.get(INPUTS), meta.get("crc32c"));
      expect(file, Reason.BAD_HEADER, "format", meta, FORMAT);
      expect(file, Reason.FOREIGN_FINGERPRINT, "fingerprint", meta, expected.hex());
      expect(file, Reason.FOREIGN_FINGERPRINT, "cache_id", meta, expected.cacheId());
      for (String key : List.of("n", "range_size", "fields")) {
        expect(file, Reason.SHAPE_MISMATCH, key, meta, want.get(key));
      }
      ExportInputs.check(file, ExportInputs.parse(file, meta.get(INPUTS)), expected);
      SafetensorsChecks.checkCrcSyntax(file, meta.get("crc32c"));
      SafetensorsChecks.checkTensors(file, root, tensors);
      SafetensorsChecks.checkCanonical(file, header, tensors, meta);
      long dataLength = TensorInfo.dataLength(tensors);
      SafetensorsChecks.checkFileSize(file, size, header.length, dataLength);

      DataRegionReader in = new DataRegionReader(ch, 8L + header.length, dataLength);
      int ranges = spec.rangeCount();
      Object[][] values = new Object[ranges][spec.fields().size()];
      for (int f = 0; f < spec.fields().size(); f++) {
        FieldSpec field = spec.fields().get(f);
        for (int r = 0; r < ranges; r++) {
          int elements = spec.rangeLength(r) * field.width();
          values[r][f] = field.dtype().newArray(elements);
          in.getElements(field.dtype(), values[r][f], 0, elements);
        }
      }
      long[][] presence = new long[ranges][];
      byte[] flags = new byte[spec.rangeSize()];
      for (int r = 0; r < ranges; r++) {
        int length = spec.rangeLength(r);
        in.getBytes(flags, 0, length);
        presence[r] = new long[(length + 63) / 64];
        for (int i = 0; i < length; i++) {
          if ((flags[i] & 0xfe) != 0) {
            throw reject(
                file,
                Reason.BAD_VALUE,
                "%s[%d] is %d, expected 0 or 1",
                PRESENT,
                spec.rangeStart(r) + i,
                flags[i] & 0xff);
          }
          presence[r][i >>> 6] |= (long) flags[i] << i;
        }
      }
      expect(file, Reason.BAD_CHECKSUM, "crc32c", meta, crcHex(in.crc32c()));
      List<Block> blocks = new ArrayList<>(ranges);
      for (int r = 0; r < ranges; r++) {
        try {
          blocks.add(Block.adopt(spec, r, values[r], presence[r]));
        } catch (IllegalArgumentException e) {
          throw reject(file, Reason.BAD_VALUE, "%s", e.getMessage());
        }
        values[r] = null;
      }
      return blocks;
    } catch (EOFException e) {
      throw reject(file, Reason.TRUNCATED, "%s", e.getMessage());
    }
  }

  private static List<TensorInfo> tensors(CacheSpec spec) {
    List<TensorInfo> tensors = new ArrayList<>(spec.fields().size() + 1);
    for (FieldSpec f : spec.fields()) {
      int[] fieldShape = f.shape();
      long[] shape = new long[fieldShape.length + 1];
      shape[0] = spec.n();
      for (int i = 0; i < fieldShape.length; i++) {
        shape[i + 1] = fieldShape[i];
      }
      tensors.add(new TensorInfo(f.name(), f.dtype().safetensorsName(), shape));
    }
    tensors.add(new TensorInfo(PRESENT, "U8", new long[] {spec.n()}));
    return tensors;
  }

  /**
   * The inputs recorded in an export's header, empty for an export written before they were; a
   * value that is not a JSON object of strings is rejected. The data is not read or checked: {@link
   * #read} does that.
   */
  public static Map<String, String> inputs(Path file) throws IOException {
    try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
      byte[] header = SafetensorsReader.read(file, ch, ch.size());
      ObjectNode root = SafetensorsJson.parse(file, header);
      Map<String, String> meta = SafetensorsChecks.metadata(file, root, KEYS, OPTIONAL);
      expect(file, Reason.BAD_HEADER, "format", meta, FORMAT);
      return ExportInputs.parse(file, meta.get(INPUTS));
    } catch (EOFException e) {
      throw reject(file, Reason.TRUNCATED, "%s", e.getMessage());
    }
  }

  static Map<String, String> metadata(
      CacheSpec spec, Fingerprint fp, String inputsJson, String crc) {
    Map<String, String> meta = new LinkedHashMap<>();
    meta.put("format", FORMAT);
    meta.put("cache_id", fp.cacheId());
    meta.put("fingerprint", fp.hex());
    meta.put("n", Long.toString(spec.n()));
    meta.put("range_size", Integer.toString(spec.rangeSize()));
    meta.put("fields", fieldsJson(spec));
    if (inputsJson != null) {
      meta.put(INPUTS, inputsJson);
    }
    meta.put("crc32c", crc);
    return meta;
  }

  /**
   * The fields as a JSON array of {@code {"name", "dtype", "shape"}} ({@code "per_token": true} too
   * for a per-token field, whose shape is then one token's), for Python readers.
   */
  static String fieldsJson(CacheSpec spec) {
    ArrayNode fields = JSON.createArrayNode();
    for (FieldSpec f : spec.fields()) {
      ObjectNode o =
          fields.addObject().put("name", f.name()).put("dtype", f.dtype().safetensorsName());
      ArrayNode shape = o.putArray("shape");
      for (int d : f.shape()) {
        shape.add(d);
      }
      if (f.perToken()) {
        o.put("per_token", true); // only then, so the fields of other exports read as they did
      }
    }
    try {
      return JSON.writeValueAsString(fields);
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("cannot encode the fields of cache '" + spec.name() + "'", e);
    }
  }
}
