package org.tensorcache.bench.report;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;

/** The results files of the benchmarks: indented JSON, with the machine they were measured on. */
public final class Results {
  private Results() {}

  /** Writes {@code results} to {@code json} (making its directory) and says so. */
  public static void write(Path json, Map<String, ?> results) throws IOException {
    Files.createDirectories(json.toAbsolutePath().getParent());
    new ObjectMapper()
        .enable(SerializationFeature.INDENT_OUTPUT)
        .writeValue(json.toFile(), results);
    System.out.println("written " + json);
  }

  /**
   * Writes {@code figures} into {@code json} under {@code benchmark} and {@code header}, keeping
   * the figures another part put there in an earlier run.
   */
  @SuppressWarnings("unchecked")
  public static void merge(
      Path json, String benchmark, Map<String, ?> header, Map<String, ?> figures)
      throws IOException {
    Map<String, Object> results = new LinkedHashMap<>(Map.of("benchmark", benchmark));
    if (Files.exists(json)) {
      results.putAll(new ObjectMapper().readValue(json.toFile(), Map.class));
    }
    results.putAll(header);
    results.putAll(figures);
    write(json, results);
  }

  /** What every results file starts with: when, on what machine, how large a run. */
  public static Map<String, Object> header(String size) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("when", Instant.now().toString());
    m.put("machine", machine());
    m.put("size", size);
    return m;
  }

  public static Map<String, Object> machine() {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("cores", Runtime.getRuntime().availableProcessors());
    m.put("max_heap_mib", Runtime.getRuntime().maxMemory() >> 20);
    m.put("java", System.getProperty("java.vm.name") + " " + System.getProperty("java.version"));
    m.put("os", System.getProperty("os.name") + " " + System.getProperty("os.arch"));
    return m;
  }
}
