package org.tensorcache.model.data;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.BufferedInputStream;
import java.io.BufferedReader;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.DigestInputStream;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Iterator;
import java.util.NoSuchElementException;
import java.util.zip.GZIPInputStream;
import java.util.zip.ZipException;

/**
 * Streams a JSONL data set (plain or gzip, told apart by its first bytes), one row per line; the
 * example index is the 0-based row number. A first line {@code {"tensorcache": {...}}} is a header
 * (written by the data set preparation script) and not a row. While it reads it hashes the
 * uncompressed bytes, header included, so {@link #digest()} after the last row covers exactly what
 * was read, and a file and its gzip make the same cache.
 */
public final class DatasetReader implements Iterator<Example>, AutoCloseable {
  /** The key of the header object on a data set's first line. */
  public static final String HEADER_KEY = "tensorcache";

  /** Tells users of conversational rows how to turn them into token ids. */
  public static final String PREPARE_HINT =
      "conversational rows are tokenized with the model's chat template by"
          + " 'python scripts/prepare_dataset.py --model-dir DIR --dataset FILE --out OUT.jsonl';"
          + " give its output as the data set";

  private static final ObjectMapper JSON =
      new ObjectMapper().enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS);

  private final String source;
  private final MessageDigest sha256;
  private final BufferedReader lines;
  private final boolean gzip;
  private DataFormat format;
  private String pending;
  private long lineNumber;
  private long rows;
  private boolean done;
  private boolean started;
  private JsonNode header;
  private String digest;
  private final RowsDigest textRows = RowsDigest.create();
  private String textRowsDigest;

  private DatasetReader(String source, InputStream in, DataFormat format) throws IOException {
    this.source = source;
    this.format = format;
    try {
      this.sha256 = MessageDigest.getInstance("SHA-256");
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
    var utf8 =
        StandardCharsets.UTF_8
            .newDecoder()
            .onMalformedInput(CodingErrorAction.REPORT)
            .onUnmappableCharacter(CodingErrorAction.REPORT);
    InputStream raw = new BufferedInputStream(in, 1 << 16);
    raw.mark(2);
    this.gzip = raw.read() == 0x1f && raw.read() == 0x8b;
    raw.reset();
    InputStream plain;
    try {
      plain = gzip ? new GZIPInputStream(raw, 1 << 16) : raw;
    } catch (ZipException | EOFException e) {
      raw.close();
      throw notGzip(1, e);
    }
    this.lines =
        new BufferedReader(
            new InputStreamReader(new DigestInputStream(plain, sha256), utf8), 1 << 16);
  }

  /** Opens a JSONL file (plain or gzip); {@code format} null detects it from the first row. */
  public static DatasetReader open(Path file, DataFormat format) throws IOException {
    return new DatasetReader(file.toString(), Files.newInputStream(file), format);
  }

  /** Reads JSONL from a stream; {@code source} names it in errors. */
  public static DatasetReader of(String source, InputStream in, DataFormat format)
      throws IOException {
    return new DatasetReader(source, in, format);
  }

  @Override
  public boolean hasNext() {
    if (!started) {
      started = true;
      readLine();
      if (pending != null && isHeader(pending)) {
        lineNumber++;
        pending = null;
      }
    }
    if (pending == null && !done) {
      readLine();
    }
    return !done;
  }

  private void readLine() {
    try {
      pending = lines.readLine();
    } catch (CharacterCodingException e) {
      throw new MalformedDataException(source, lineNumber + 1, "is not valid UTF-8", e);
    } catch (IOException e) {
      if (gzip && (e instanceof ZipException || e instanceof EOFException)) {
        throw notGzip(lineNumber + 1, e);
      }
      throw new UncheckedIOException(source + ": " + e.getMessage(), e);
    }
    done = pending == null;
  }

  /** A damaged or cut gzip stream is bad data, found while reading line {@code line}. */
  private MalformedDataException notGzip(long line, IOException e) {
    return new MalformedDataException(
        source, line, "is not valid gzip (" + e.getMessage() + ")", e);
  }

  private boolean isHeader(String line) {
    if (!line.startsWith("{\"" + HEADER_KEY + "\"")) {
      return false;
    }
    JsonNode node = parse(line, 1);
    if (node.size() != 1 || !node.get(HEADER_KEY).isObject()) {
      return false;
    }
    header = node.get(HEADER_KEY);
    return true;
  }

  @Override
  public Example next() {
    if (!hasNext()) {
      throw new NoSuchElementException();
    }
    String line = pending;
    pending = null;
    lineNumber++;
    JsonNode node = parse(line, lineNumber);
    if (format == null) {
      format = DataFormat.detect(node);
      if (format == null) {
        throw new MalformedDataException(
            source,
            lineNumber,
            "has none of the known row shapes: {\"prompt\", \"chosen\", \"rejected\"} (text or"
                + " conversational), {\"prompt_ids\", \"chosen_ids\", \"rejected_ids\"} (tokens),"
                + " {\"text\"} (document), {\"prompt\", \"completion\"} (completion),"
                + " {\"input_ids\", \"completion_mask\"} (completion_tokens); fields found: "
                + fieldNames(node),
            null);
      }
    }
    Example row = RowParser.parse(format, node, rows++, new RowParser.Where(source, lineNumber));
    if (format == DataFormat.TEXT) {
      textRows.add(node);
    }
    return row;
  }

  private JsonNode parse(String line, long number) {
    JsonNode node;
    try {
      node = JSON.readTree(line);
    } catch (JsonProcessingException e) {
      throw new MalformedDataException(
          source, number, "is not valid JSON (" + e.getOriginalMessage() + ")", e);
    }
    if (node == null || !node.isObject()) {
      throw new MalformedDataException(source, number, "expected a JSON object per line", null);
    }
    return node;
  }

  private static String fieldNames(JsonNode node) {
    StringBuilder sb = new StringBuilder("[");
    node.fieldNames().forEachRemaining(n -> sb.append(sb.length() > 1 ? ", " : "").append(n));
    return sb.append(']').toString();
  }

  /** The format of the rows: as forced, or as detected from the first row (null before it). */
  public DataFormat format() {
    return format;
  }

  /** The header object of the first line, or null when the file has none. */
  public JsonNode header() {
    return header;
  }

  /** The SHA-256 (hex) of the uncompressed bytes read; complete only once all rows are read. */
  public String digest() {
    if (!done) {
      throw new IllegalStateException("digest of " + source + " asked before its end was read");
    }
    if (digest == null) {
      digest = HexFormat.of().formatHex(sha256.digest());
    }
    return digest;
  }

  /**
   * The {@link RowsDigest} of text rows as read, {@code tools} and {@code chat_template_kwargs}
   * included; null for rows of another format. Complete only once all rows are read.
   */
  public String textRowsDigest() {
    if (format != DataFormat.TEXT) {
      return null;
    }
    if (!done) {
      throw new IllegalStateException(
          "rows digest of " + source + " asked before its end was read");
    }
    if (textRowsDigest == null) {
      textRowsDigest = textRows.hex();
    }
    return textRowsDigest;
  }

  @Override
  public void close() throws IOException {
    lines.close();
  }
}
