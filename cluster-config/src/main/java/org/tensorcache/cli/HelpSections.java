package org.tensorcache.cli;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import picocli.CommandLine;
import picocli.CommandLine.Help;
import picocli.CommandLine.Model.ArgGroupSpec;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;
import picocli.CommandLine.Model.UsageMessageSpec;

/**
 * Usage help that lists a command's headed option groups first, each in the order its options are
 * declared, then the rest under {@value #OTHERS}: the options that decide a cache (the job options)
 * come before those of the command, the cluster and the operations. Picocli lists the ungrouped
 * options first, and sorts every list by name.
 */
final class HelpSections {
  /** The heading of the options outside the groups. */
  static final String OTHERS = "Other options:";

  private HelpSections() {}

  /** Installs the order on {@code cli}'s subcommands whose option groups all have headings. */
  static CommandLine groupsFirst(CommandLine cli) {
    for (CommandLine sub : cli.getSubcommands().values()) {
      List<ArgGroupSpec> groups = sub.getCommandSpec().argGroups();
      if (!groups.isEmpty() && groups.stream().allMatch(g -> g.heading() != null)) {
        sub.getHelpSectionMap().put(UsageMessageSpec.SECTION_KEY_OPTION_LIST, HelpSections::render);
        // the sections say what each option is for; a synopsis of thirty options says nothing
        sub.getCommandSpec().usageMessage().abbreviateSynopsis(true);
      }
    }
    return cli;
  }

  /** The option list; a layout collects the rows of every list it renders, so one per list. */
  private static String render(Help help) {
    CommandSpec spec = help.commandSpec();
    StringBuilder text = new StringBuilder();
    List<ArgGroupSpec> groups = new ArrayList<>(spec.argGroups());
    groups.sort(Comparator.comparingInt(ArgGroupSpec::order));
    for (ArgGroupSpec group : groups) {
      text.append(help.createHeading("%n" + group.heading()));
      text.append(
          help.optionListExcludingGroups(
              group.options(), help.createDefaultLayout(), null, help.parameterLabelRenderer()));
    }
    List<OptionSpec> others = spec.options().stream().filter(o -> o.group() == null).toList();
    text.append(help.createHeading("%n" + OTHERS + "%n"));
    text.append(
        help.optionListExcludingGroups(
            others,
            help.createDefaultLayout(),
            help.createDefaultOptionSort(),
            help.parameterLabelRenderer()));
    return text.toString();
  }
}
