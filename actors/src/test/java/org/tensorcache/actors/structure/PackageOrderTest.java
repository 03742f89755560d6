package org.tensorcache.actors.structure;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.Architectures.layeredArchitecture;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.library.Architectures.LayeredArchitecture;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The actor packages in the order of the module's package-info and docs/modules.md: each may use
 * only packages before it, the composition root uses them all and nothing uses it.
 */
class PackageOrderTest {
  /** Lowest first, as written in {@code org/tensorcache/actors/package-info.java}. */
  static final List<String> ORDER =
      List.of("cache", "replica", "shard", "coordinator", "session", "lookup", "client");

  private static final JavaClasses MAIN =
      new ClassFileImporter()
          .withImportOption(new ImportOption.DoNotIncludeTests())
          .importPackages("org.tensorcache.actors");

  @Test
  void eachPackageUsesOnlyThePackagesBeforeIt() {
    LayeredArchitecture layers =
        layeredArchitecture()
            .consideringOnlyDependenciesInLayers()
            .layer("root")
            .definedBy("org.tensorcache.actors");
    for (String p : ORDER) {
      layers = layers.layer(p).definedBy("org.tensorcache.actors." + p + "..");
    }
    layers = layers.whereLayer("root").mayNotBeAccessedByAnyLayer();
    for (int i = 0; i < ORDER.size(); i++) {
      List<String> above = new java.util.ArrayList<>(ORDER.subList(i + 1, ORDER.size()));
      above.add("root");
      layers =
          layers.whereLayer(ORDER.get(i)).mayOnlyBeAccessedByLayers(above.toArray(String[]::new));
    }
    layers.check(MAIN);
  }

  /** The replication mode is a type: only it and its two cases know which case a cache has. */
  @Test
  void onlyTheReplicationTypeKnowsItsCases() {
    noClasses()
        .that()
        .doNotHaveSimpleName("Replication")
        .should()
        .dependOnClassesThat()
        .haveFullyQualifiedName("org.tensorcache.actors.cache.ByValue")
        .orShould()
        .dependOnClassesThat()
        .haveFullyQualifiedName("org.tensorcache.actors.cache.ByReference")
        .check(MAIN);
  }

  /** Main and test code: a test helper in one package used from another counts too. */
  private static final JavaClasses ALL =
      new ClassFileImporter().importPackages("org.tensorcache.actors");

  @Test
  void noImportCycleBetweenPackagesOfMainOrTestCode() {
    // (**) puts the root package, the composition root, in a slice of its own as well
    slices().matching("org.tensorcache.(**)").should().beFreeOfCycles().check(ALL);
  }
}
