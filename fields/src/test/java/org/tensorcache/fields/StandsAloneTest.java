package org.tensorcache.fields;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;

import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.junit.AnalyzeClasses;
import com.tngtech.archunit.junit.ArchTest;
import com.tngtech.archunit.lang.ArchRule;

/**
 * The field spec types depend on the JDK alone: every module (storage, runners, actors, tools)
 * takes them without taking an engine, an actor system or another module of the project.
 */
@AnalyzeClasses(
    packages = "org.tensorcache.fields",
    importOptions = ImportOption.DoNotIncludeTests.class)
class StandsAloneTest {
  @ArchTest
  static final ArchRule onlyTheJdk =
      classes()
          .that()
          .resideInAPackage("org.tensorcache.fields..")
          .should()
          .onlyDependOnClassesThat()
          .resideInAnyPackage("java..", "org.tensorcache.fields..");
}
