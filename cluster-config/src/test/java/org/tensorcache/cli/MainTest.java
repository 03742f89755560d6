package org.tensorcache.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

class MainTest {
  @TempDir Path dir;

  @Test
  void malformedDataSetIsOneLineNamingLineAndFieldAndNothingIsStored() throws Exception {
    Path data = dir.resolve("bad.jsonl");
    Files.writeString(
        data,
        "{\"prompt\":\"1+1=\",\"chosen\":\"2\",\"rejected\":\"3\"}\n"
            + "{\"prompt\":\"2+2=\",\"rejected\":\"5\"}\n");
    StringWriter err = new StringWriter();
    CommandLine cli = Main.commandLine().setErr(new PrintWriter(err));
    int code =
        cli.execute(
            "demo", "--data-dir", dir.resolve("data").toString(), "--dataset", data.toString());
    assertEquals(1, code);
    assertEquals(
        "tensorcache demo: " + data + " line 2: field 'chosen' is missing, expected a string\n",
        err.toString());
    assertFalse(Files.exists(dir.resolve("data")), "nothing may be made for a bad data set");
  }
}
