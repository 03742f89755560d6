package org.tensorcache.bench.byo;

import java.io.IOException;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import org.tensorcache.model.batch.BudgetSettings;

/**
 * Whether the fill keeps its memory bound on long rows: the wide model (151,936 logits per
 * position) filling rows of 1,500 to 2,048 tokens (cut at 2,048) at the default token budget and
 * memory bound, its peak resident memory against its resident memory once the model is loaded.
 */
final class MemoryCheck {
  private static final String MODEL = "wide";

  private MemoryCheck() {}

  /** Runs the check; its figures. */
  static Map<String, Object> run(BenchModel bench, ByoSize size, Runs runs)
      throws IOException, InterruptedException {
    runs.model(MODEL + "-long", 1);
    Path data = bench.longDataset(size.longRows());
    Map<String, Object> c = new LinkedHashMap<>();
    c.put("model", MODEL);
    c.put("rows", size.longRows());
    c.put("max_length", ByoSize.LONG_MAX_LENGTH);
    long bound;
    try (Padding padding =
        Padding.of(
            bench.modelDir(MODEL),
            data,
            ByoSize.LONG_MAX_LENGTH,
            BudgetSettings.DEFAULT,
            bench.vocab(MODEL))) {
      bound = padding.budget().memoryBound();
      c.put("plan", padding.figures());
    }
    Measurement x = runs.fill(bench.modelDir(MODEL), data, ByoSize.LONG_MAX_LENGTH, 0, null);
    ByoBench.print(MODEL, "(m) memory check, " + size.longRows() + " long rows", x);
    c.put("fill", x.toMap());
    c.put("memory_bound_mib", ProcMemory.mib(bound));
    if (!x.ok()) {
      c.put("within_bound", false);
      return c;
    }
    long grew = x.peakRss() - x.rssAfterLoad();
    c.put("peak_rss_mib", ProcMemory.mib(x.peakRss()));
    c.put("rss_after_load_mib", ProcMemory.mib(x.rssAfterLoad()));
    c.put("peak_minus_after_load_mib", ProcMemory.mib(grew));
    c.put("within_bound", grew <= bound);
    System.out.printf(
        "(m) peak RSS %,d MiB - RSS after load %,d MiB = %,d MiB; memory bound %,d MiB: %s%n",
        ProcMemory.mib(x.peakRss()),
        ProcMemory.mib(x.rssAfterLoad()),
        ProcMemory.mib(grew),
        ProcMemory.mib(bound),
        grew <= bound ? "within" : "OVER");
    return c;
  }
}
