package org.tensorcache.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/**
 * The help of the commands that take job options: the options of the user's model and data set
 * first, then the cache's, then the built-in demo model's in a section of their own, then the rest.
 */
class HelpSectionsTest {
  /** What must come in this order, each once. */
  private static final List<String> ORDER =
      List.of(
          "Your model and data set:",
          "--model-dir=DIR",
          "--dataset=FILE",
          "--format=FORMAT",
          "--max-length=N",
          "--truncation-mode=MODE",
          "--runner=RUNNER",
          "--dtype=DTYPE",
          "--batch-tokens=N",
          "--memory-bound=SIZE",
          "The cache:",
          "--data-dir=DIR",
          "--range-size=N",
          "--cache-name=NAME",
          "The built-in demo model (without --model-dir)",
          "--hidden=N",
          "--layers=N",
          "--embed=N",
          "--max-seq-len=N",
          "--model-seed=SEED",
          "--examples=N",
          "--data-seed=SEED",
          HelpSections.OTHERS,
          "--help");

  /** The section of the commands that compute, after the built-in model's. */
  private static final List<String> COMPUTING = List.of("Computing:", "--micro-batch=N");

  @Test
  void jobOptionsComeFirstAndTheBuiltInModelsHaveTheirOwnSection() {
    CommandLine cli = Main.commandLine();
    for (String command : List.of("fill", "node", "export", "cache-id", "demo", "status")) {
      String usage = cli.getSubcommands().get(command).getUsageMessage();
      boolean computes = List.of("fill", "node", "demo").contains(command);
      List<String> order = new java.util.ArrayList<>(ORDER);
      if (computes) {
        order.addAll(order.indexOf(HelpSections.OTHERS), COMPUTING);
      } else {
        for (String text : COMPUTING) {
          assertEquals(-1, usage.indexOf(text), command + " computes nothing: " + text);
        }
      }
      int at = -1;
      for (String text : order) {
        int found = usage.indexOf(text);
        assertTrue(found > at, command + ": '" + text + "' missing or out of order in\n" + usage);
        assertEquals(found, usage.lastIndexOf(text), command + ": '" + text + "' twice\n" + usage);
        at = found;
      }
    }
    String fill = cli.getSubcommands().get("fill").getUsageMessage();
    assertTrue(fill.indexOf("      --local ") > fill.indexOf(HelpSections.OTHERS), fill);
    String export = cli.getSubcommands().get("export").getUsageMessage();
    assertTrue(export.indexOf("--out=FILE") > export.indexOf(HelpSections.OTHERS), export);
  }

  @Test
  void commandsWithoutJobOptionsKeepTheirHelp() {
    String certs = Main.commandLine().getSubcommands().get("certs").getUsageMessage();
    assertTrue(!certs.contains(HelpSections.OTHERS), certs);
  }
}
