package io.dlock.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;
import picocli.CommandLine.Help.Ansi;

/** What {@code dlock --help} prints: one whole sentence per command, as a new user reads it. */
class HelpTextTest {

  @Test
  void everyCommandInTheListIsSummedUpInOneWholeSentence() {
    String usage = new CommandLine(new Dlock()).getUsageMessage(Ansi.OFF);
    List<String> entries = commandEntries(usage);

    assertThat(entries)
        .as(usage)
        .hasSize(4)
        .allSatisfy(
            entry -> {
              String summary = entry.substring(entry.indexOf(' ')).strip();
              assertThat(summary).as(entry).matches("[A-Z][^.]*\\.");
            });
  }

  @Test
  void eachCommandsOwnHelpStartsWithThatSentence() {
    CommandLine dlock = new CommandLine(new Dlock());
    for (String name : List.of("run", "status", "release", "demo")) {
      String[] description =
          dlock.getSubcommands().get(name).getCommandSpec().usageMessage().description();
      assertThat(description[0]).as(name).matches("[A-Z][^.]*\\.");
      for (String line : description) {
        assertThat(line).as(name).endsWith(".").doesNotEndWith(", and.");
      }
    }
  }

  /** The lines under "Commands:", a wrapped summary joined to its command's line. */
  private static List<String> commandEntries(String usage) {
    List<String> entries = new ArrayList<>();
    boolean inCommands = false;
    for (String line : usage.split("\\R")) {
      if (line.startsWith("Commands:")) {
        inCommands = true;
      } else if (inCommands && line.isBlank()) {
        break;
      } else if (inCommands && line.startsWith("  ") && !line.startsWith("   ")) {
        entries.add(line.strip());
      } else if (inCommands && !entries.isEmpty()) {
        int last = entries.size() - 1;
        entries.set(last, entries.get(last) + " " + line.strip());
      }
    }
    return entries;
  }
}
