package org.tensorcache.model.data;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.BufferedReader;
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

/**
 * Streams a JSONL preference data set, one {@code {"prompt", "chosen", "rejected"}} object per
 * line; the example index is the 0-based line number. While it reads it hashes the file's bytes, so
 * {@link #digest()} after the last example is the SHA-256 of exactly what was read.
 */
public final class PreferenceReader implements Iterator<PreferenceExample>, AutoCloseable {
  private static final ObjectMapper JSON =
      new ObjectMapper().enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS);
  private static final String[] FIELDS = {"prompt", "chosen", "rejected"};

  private final String source;
  private final MessageDigest sha256;
  private final BufferedReader lines;
  private String pending;
  private long lineNumber;
  private boolean done;
  private String digest;

  private PreferenceReader(String source, InputStream in) {
    this.source = source;
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
    this.lines =
        new BufferedReader(new InputStreamReader(new DigestInputStream(in, sha256), utf8), 1 << 16);
  }

  /** Opens a JSONL file. */
  public static PreferenceReader open(Path file) throws IOException {
    return new PreferenceReader(file.toString(), Files.newInputStream(file));
  }

  /** Reads JSONL from a stream; {@code source} names it in errors. */
  public static PreferenceReader of(String source, InputStream in) {
    return new PreferenceReader(source, in);
  }

  @Override
  public boolean hasNext() {
    if (pending == null && !done) {
      try {
        pending = lines.readLine();
      } catch (CharacterCodingException e) {
        throw new MalformedDataException(source, lineNumber + 1, "is not valid UTF-8", e);
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
      done = pending == null;
    }
    return !done;
  }

  @Override
  public PreferenceExample next() {
    if (!hasNext()) {
      throw new NoSuchElementException();
    }
    String line = pending;
    pending = null;
    lineNumber++;
    return parse(line, lineNumber);
  }

  private PreferenceExample parse(String line, long number) {
    JsonNode node;
    try {
      node = JSON.readTree(line);
    } catch (JsonProcessingException e) {
      throw new MalformedDataException(
          source, number, "is not valid JSON (" + e.getOriginalMessage() + ")", e);
    }
    if (node == null || !node.isObject()) {
      throw new MalformedDataException(
          source, number, "expected a JSON object {\"prompt\", \"chosen\", \"rejected\"}", null);
    }
    String[] values = new String[FIELDS.length];
    for (int i = 0; i < FIELDS.length; i++) {
      JsonNode value = node.get(FIELDS[i]);
      if (value == null) {
        throw new MalformedDataException(
            source, number, "field '" + FIELDS[i] + "' is missing, expected a string", null);
      }
      if (!value.isTextual()) {
        throw new MalformedDataException(
            source,
            number,
            "field '" + FIELDS[i] + "' is " + value.getNodeType() + ", expected a string",
            null);
      }
      values[i] = value.textValue();
    }
    return new PreferenceExample(number - 1, values[0], values[1], values[2]);
  }

  /** The SHA-256 (hex) of the bytes read; complete only once the reader is exhausted. */
  public String digest() {
    if (!done) {
      throw new IllegalStateException("digest of " + source + " asked before its end was read");
    }
    if (digest == null) {
      digest = HexFormat.of().formatHex(sha256.digest());
    }
    return digest;
  }

  @Override
  public void close() throws IOException {
    lines.close();
  }
}
