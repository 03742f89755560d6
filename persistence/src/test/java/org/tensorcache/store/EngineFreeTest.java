package org.tensorcache.store;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;

import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.junit.AnalyzeClasses;
import com.tngtech.archunit.junit.ArchTest;
import com.tngtech.archunit.lang.ArchRule;

/**
 * Storage needs the field spec types, never the model engine: this module reads and writes values
 * without DJL, PyTorch or the runners, so that a node's persistence and every tool on it load no
 * native library.
 */
@AnalyzeClasses(
    packages = "org.tensorcache.store",
    importOptions = ImportOption.DoNotIncludeTests.class)
class EngineFreeTest {
  @ArchTest
  static final ArchRule noEngineNorRunners =
      noClasses()
          .that()
          .resideInAPackage("org.tensorcache.store..")
          .should()
          .dependOnClassesThat()
          .resideInAnyPackage("ai.djl..", "org.pytorch..", "org.tensorcache.model..");
}
