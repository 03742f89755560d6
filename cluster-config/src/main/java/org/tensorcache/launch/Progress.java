package org.tensorcache.launch;

import java.time.temporal.ChronoUnit;
import me.tongfei.progressbar.DelegatingProgressBarConsumer;
import me.tongfei.progressbar.ProgressBar;
import me.tongfei.progressbar.ProgressBarBuilder;
import me.tongfei.progressbar.ProgressBarStyle;

/** Progress bars with rate and ETA; one line per update when the output is not a terminal. */
public final class Progress {
  private Progress() {}

  /** A bar counting examples of {@code task} up to {@code total}. */
  public static ProgressBar examples(String task, long total) {
    ProgressBarBuilder builder =
        new ProgressBarBuilder()
            .setTaskName(task)
            .setInitialMax(total)
            .setUnit(" ex", 1)
            .showSpeed()
            .setSpeedUnit(ChronoUnit.SECONDS)
            .setStyle(ProgressBarStyle.ASCII);
    if (System.console() == null) {
      builder.setConsumer(new DelegatingProgressBarConsumer(System.out::println, 100));
      builder.setUpdateIntervalMillis(2000);
    }
    return builder.build();
  }
}
