package org.tensorcache.actors.structure;

import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.Config;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.reflect.Array;
import java.lang.reflect.Modifier;
import java.lang.reflect.RecordComponent;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Predicate;
import java.util.jar.JarFile;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.tensorcache.actors.coordinator.Coordinator;
import org.tensorcache.store.serialization.KryoSettings;

/**
 * The types of this module that cross nodes, found from the compiled classes and the configuration
 * rather than listed by hand, so that a new message without a round-trip test fails the test that
 * should have one.
 */
public final class WireTypes {
  private WireTypes() {}

  /**
   * Every class of this module that Pekko serializes to send it to another node: each one that is
   * assignable to a class bound in {@code pekko.actor.serialization-bindings} to a serializer of
   * the project (the Kryo marker, the replicated blocks), except private ones, which are an actor's
   * internal messages and never leave it.
   */
  public static Set<Class<?>> sent(Config config) {
    List<Class<?>> bound = boundToProjectSerializers(config);
    Set<Class<?>> sent = byName();
    for (Class<?> type : moduleClasses()) {
      int modifiers = type.getModifiers();
      if (type.isInterface()
          || Modifier.isAbstract(modifiers) && !type.isEnum()
          || Modifier.isPrivate(modifiers)
          || type.isAnonymousClass()
          || type.isSynthetic()) {
        continue;
      }
      if (bound.stream().anyMatch(b -> b.isAssignableFrom(type))) {
        sent.add(type);
      }
    }
    return sent;
  }

  /** Every class registered for Kryo under {@code tensorcache.kryo.classes}. */
  public static Set<Class<?>> registered(Config config) {
    Set<Class<?>> registered = byName();
    registered.addAll(
        KryoSettings.fromConfig(config, WireTypes.class.getClassLoader()).classes().values());
    return registered;
  }

  /** The classes of {@code samples} and of everything inside them: record components, elements. */
  public static Set<Class<?>> reached(Collection<?> samples) {
    Set<Class<?>> reached = byName();
    samples.forEach(s -> reach(s, reached));
    return reached;
  }

  /**
   * Asserts that every class in {@code scope} that crosses nodes is one of the {@code samples}, and
   * that every class in scope registered for Kryo is reached by them; the message names the ones
   * missing.
   */
  public static void assertCovered(
      Collection<?> samples, Predicate<Class<?>> scope, Config config, String where) {
    Set<Class<?>> sampled = byName();
    samples.forEach(s -> sampled.add(s.getClass()));
    List<String> missing = new ArrayList<>();
    for (Class<?> type : sent(config)) {
      if (scope.test(type) && !sampled.contains(type)) {
        missing.add(type.getName());
      }
    }
    Set<Class<?>> reached = reached(samples);
    for (Class<?> type : registered(config)) {
      if (scope.test(elementType(type)) && !reached.contains(type)) {
        missing.add(type.getName() + " (registered for Kryo)");
      }
    }
    assertTrue(
        missing.isEmpty(),
        "no round trip in " + where + " for " + missing + "; add a sample there");
  }

  /** The innermost element type of an array class, or the class itself. */
  public static Class<?> elementType(Class<?> type) {
    Class<?> t = type;
    while (t.isArray()) {
      t = t.getComponentType();
    }
    return t;
  }

  private static void reach(Object value, Set<Class<?>> reached) {
    if (value == null) {
      return;
    }
    Class<?> type = value.getClass();
    reached.add(type);
    if (type.isArray() && !type.getComponentType().isPrimitive()) {
      for (int i = 0; i < Array.getLength(value); i++) {
        reach(Array.get(value, i), reached);
      }
    } else if (type.isRecord()) {
      for (RecordComponent c : type.getRecordComponents()) {
        try {
          reach(c.getAccessor().invoke(value), reached);
        } catch (ReflectiveOperationException e) {
          throw new IllegalStateException(type.getName() + "." + c.getName(), e);
        }
      }
    }
  }

  /** Classes bound to a serializer whose class is the project's, and their subtypes. */
  private static List<Class<?>> boundToProjectSerializers(Config config) {
    Map<String, Object> serializers =
        config.getConfig("pekko.actor.serializers").root().unwrapped();
    Map<String, Object> bindings =
        config.getConfig("pekko.actor.serialization-bindings").root().unwrapped();
    List<Class<?>> bound = new ArrayList<>();
    for (Map.Entry<String, Object> binding : bindings.entrySet()) {
      Object serializer = serializers.get(String.valueOf(binding.getValue()));
      if (serializer != null && serializer.toString().startsWith("org.tensorcache.")) {
        bound.add(load(binding.getKey()));
      }
    }
    assertTrue(!bound.isEmpty(), "no class bound to a serializer of the project");
    return bound;
  }

  /** Every top-level and nested class compiled into this module (a directory or a jar). */
  private static List<Class<?>> moduleClasses() {
    Path root;
    try {
      root = Path.of(Coordinator.class.getProtectionDomain().getCodeSource().getLocation().toURI());
    } catch (URISyntaxException e) {
      throw new IllegalStateException(e);
    }
    List<String> names;
    try {
      if (Files.isDirectory(root)) {
        try (Stream<Path> files = Files.walk(root)) {
          names =
              files
                  .map(p -> root.relativize(p).toString().replace('\\', '/'))
                  .filter(n -> n.endsWith(".class"))
                  .collect(Collectors.toList());
        }
      } else {
        try (JarFile jar = new JarFile(root.toFile())) {
          names =
              jar.stream()
                  .map(e -> e.getName())
                  .filter(n -> n.endsWith(".class"))
                  .collect(Collectors.toList());
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    List<Class<?>> classes = new ArrayList<>();
    for (String name : names) {
      if (name.startsWith("org/tensorcache/actors/") && !name.endsWith("package-info.class")) {
        classes.add(load(name.substring(0, name.length() - ".class".length()).replace('/', '.')));
      }
    }
    assertTrue(classes.size() > 10, "the module's classes were not found under " + root);
    return classes;
  }

  private static Class<?> load(String name) {
    try {
      return Class.forName(name, false, WireTypes.class.getClassLoader());
    } catch (ClassNotFoundException e) {
      throw new IllegalStateException("class " + name + " not found", e);
    }
  }

  private static Set<Class<?>> byName() {
    return new TreeSet<>((a, b) -> a.getName().compareTo(b.getName()));
  }
}
