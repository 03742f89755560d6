package org.tensorcache.cli;

import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.junit.AnalyzeClasses;
import com.tngtech.archunit.junit.ArchTest;
import com.tngtech.archunit.lang.ArchRule;

/**
 * Keeps this module's packages free of import cycles, so that each one can be read and tested on
 * top of the ones below it. Only the module's own main classes count: its packages, no tests.
 */
@AnalyzeClasses(
    packages = {
      "org.tensorcache.ops",
      "org.tensorcache.launch",
      "org.tensorcache.cli",
      "org.tensorcache.lease"
    },
    importOptions = ImportOption.DoNotIncludeTests.class)
class PackageCyclesTest {
  @ArchTest
  static final ArchRule packagesAreFreeOfCycles =
      slices().matching("org.tensorcache.(**)").should().beFreeOfCycles();
}
