package org.tensorcache.launch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.File;
import java.io.IOException;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.tensorcache.actors.coordinator.CacheStatus;
import org.tensorcache.testing.Reaper;

/**
 * The status page in a real headless browser (Debian's chromium) during a fill: the page renders
 * from its own data, with the cache, one coverage cell per range, the figures and the lookups; a
 * screenshot is left at {@code target/status-page.png}. Without chromium it skips itself, except
 * under {@code CI=true}, where it fails.
 */
class StatusPageBrowserTest {
  private static final Pattern CELL = Pattern.compile("class=\"cell (\\w+)\" title=\"range \\d+");

  @TempDir Path dir;
  private OpsNode ops;

  @Test
  void theStatusPageShowsTheCoverageOfAFillInABrowser() throws Exception {
    String chromium = chromium();
    SmallCache cache = new SmallCache(dir.resolve("cache"), 2048, 64);
    ops = new OpsNode(dir.resolve("node"), cache.slowDefinition(60), java.util.Map.of());
    String id = cache.fingerprint.cacheId();

    assertEquals(404, ops.get(ops.metrics, "/nothing-here").statusCode());
    var fill = ops.fill(id);
    CacheStatus s = ops.status(id);
    while (s.present() < 256 && !fill.isDone()) { // well into the fill
      Thread.sleep(100);
      s = ops.status(id);
    }
    HttpResponse<String> json = ops.get(ops.metrics, "/status.json");
    for (int i = 0; i < 100 && !json.body().contains("\"present\":"); i++) {
      Thread.sleep(100); // the node has not heard from the coordinator yet
      json = ops.get(ops.metrics, "/status.json");
    }
    assertEquals(200, json.statusCode());
    assertTrue(json.body().contains("\"id\":\"" + id + "\""), json::body);
    Path screenshot = Path.of("target", "status-page.png").toAbsolutePath();
    Files.deleteIfExists(screenshot);
    String dom = browser(chromium, "--dump-dom", ops.metricsUrl());
    browser(chromium, "--screenshot=" + screenshot, ops.metricsUrl());
    boolean during = !fill.isDone();
    fill.get(5, TimeUnit.MINUTES);

    assertTrue(dom.contains("data-cache=\"" + id + "\""), "the cache is shown:\n" + dom);
    List<String> states = new ArrayList<>();
    Matcher m = CELL.matcher(dom);
    while (m.find()) {
      states.add(m.group(1));
    }
    assertEquals(32, states.size(), "one cell per range:\n" + dom);
    assertTrue(
        states.stream()
            .allMatch(List.of("missing", "computing", "complete", "persisted")::contains),
        states::toString);
    assertTrue(states.stream().anyMatch(st -> !st.equals("missing")), "some ranges are done");
    if (during) {
      assertTrue(states.contains("missing") || states.contains("computing"), states::toString);
    }
    assertTrue(dom.contains("/ 2,048 ("), "examples present of all:\n" + dom);
    assertTrue(dom.contains("data-figure=\"rate\""), dom);
    assertTrue(dom.contains("data-path=\"member\""), "the lookups table:\n" + dom);
    assertTrue(dom.contains("compute, lookup, trainer"), "the member's roles:\n" + dom);
    assertTrue(Files.size(screenshot) > 10_000, "a screenshot at " + screenshot);
  }

  /** Chromium's path; skips the test without it, or fails it on CI. */
  private static String chromium() {
    for (String name : List.of("chromium", "chromium-browser")) {
      for (String d : System.getenv().getOrDefault("PATH", "").split(File.pathSeparator)) {
        Path p = Path.of(d, name);
        if (Files.isExecutable(p)) {
          return p.toString();
        }
      }
    }
    String message = "chromium not found on PATH (apt-get install chromium)";
    if ("true".equals(System.getenv("CI"))) {
      fail("CI: the status page test needs a browser: " + message);
    }
    Assumptions.abort("status page browser test skipped: " + message);
    return null;
  }

  /** Runs headless chromium on {@code url}; its standard output. */
  private String browser(String chromium, String mode, String url)
      throws IOException, InterruptedException {
    Path profile = Files.createTempDirectory(dir, "chromium");
    Path out = dir.resolve("chromium-" + System.nanoTime() + ".out");
    Process p =
        Reaper.start(
            new ProcessBuilder(
                    chromium,
                    "--headless",
                    "--no-sandbox",
                    "--disable-gpu",
                    "--disable-dev-shm-usage",
                    "--user-data-dir=" + profile,
                    "--window-size=1280,900",
                    "--virtual-time-budget=3000",
                    mode,
                    url)
                .redirectOutput(out.toFile())
                .redirectError(ProcessBuilder.Redirect.DISCARD));
    if (!p.waitFor(90, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      fail("chromium " + mode + " did not finish in 90 s");
    }
    assertEquals(0, p.exitValue(), "chromium " + mode);
    return Files.readString(out, StandardCharsets.UTF_8);
  }

  @AfterEach
  void stop() {
    if (ops != null) {
      ops.close();
    }
  }
}
