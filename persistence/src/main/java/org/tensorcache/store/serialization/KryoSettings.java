package org.tensorcache.store.serialization;

import com.esotericsoftware.kryo.Kryo;
import com.typesafe.config.Config;
import com.typesafe.config.ConfigException;
import com.typesafe.config.ConfigValue;
import com.typesafe.config.ConfigValueType;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.TreeMap;

/**
 * Kryo settings read once from {@code tensorcache.kryo}: the registered classes with their fixed
 * ids and the sizes of the pooled output buffers.
 *
 * @param classes registered classes by id, in ascending id order
 * @param bufferSize initial size in bytes of each pooled output buffer
 * @param maxBufferSize largest serialized message in bytes
 * @param pooledBufferLimit an output buffer that grew beyond this many bytes is not kept in the
 *     pool
 */
public record KryoSettings(
    Map<Integer, Class<?>> classes, int bufferSize, int maxBufferSize, int pooledBufferLimit) {

  /** Config path of these settings. */
  public static final String PATH = "tensorcache.kryo";

  /** Config path of the class registrations. */
  public static final String CLASSES_PATH = PATH + ".classes";

  /** Smallest id a configured class may take; lower ids are Kryo's own (primitives, String). */
  public static final int FIRST_FREE_ID = new Kryo().getNextRegistrationId();

  /** Checks the sizes and copies the registrations into an unmodifiable map. */
  public KryoSettings {
    if (bufferSize <= 0 || bufferSize > maxBufferSize) {
      throw new IllegalArgumentException(
          PATH
              + ".buffer-size "
              + bufferSize
              + " must be in (0, max-buffer-size = "
              + maxBufferSize
              + "]");
    }
    classes = Collections.unmodifiableMap(new LinkedHashMap<>(classes));
  }

  /**
   * Reads {@code tensorcache.kryo} from the given config, loading every registered class.
   *
   * @throws IllegalArgumentException naming the class or id when a class cannot be loaded, an id is
   *     below {@link #FIRST_FREE_ID} or two classes share an id
   */
  public static KryoSettings fromConfig(Config config, ClassLoader loader) {
    Config kryo = config.getConfig(PATH);
    return new KryoSettings(
        readClasses(config, loader),
        toInt(kryo, "buffer-size"),
        toInt(kryo, "max-buffer-size"),
        toInt(kryo, "pooled-buffer-limit"));
  }

  /** Returns the id of each registered class, the inverse of {@link #classes()}. */
  public Map<Class<?>, Integer> idsByClass() {
    Map<Class<?>, Integer> ids = new LinkedHashMap<>();
    classes.forEach((id, type) -> ids.put(type, id));
    return Collections.unmodifiableMap(ids);
  }

  private static Map<Integer, Class<?>> readClasses(Config config, ClassLoader loader) {
    Map<Integer, Class<?>> byId = new TreeMap<>();
    // entrySet of the object, not of the Config: class names contain dots and are single keys
    for (Map.Entry<String, ConfigValue> entry : config.getObject(CLASSES_PATH).entrySet()) {
      String name = entry.getKey();
      ConfigValue value = entry.getValue();
      if (value.valueType() != ConfigValueType.NUMBER) {
        throw new ConfigException.WrongType(
            value.origin(),
            CLASSES_PATH + ".\"" + name + "\"",
            "an integer registration id",
            value.valueType().name());
      }
      int id = ((Number) value.unwrapped()).intValue();
      if (id < FIRST_FREE_ID) {
        throw new IllegalArgumentException(
            "Kryo id "
                + id
                + " of class "
                + name
                + " in "
                + CLASSES_PATH
                + " is reserved by Kryo; expected an id >= "
                + FIRST_FREE_ID);
      }
      Class<?> type = load(name, loader);
      Class<?> previous = byId.putIfAbsent(id, type);
      if (previous != null) {
        throw new IllegalArgumentException(
            "Kryo id "
                + id
                + " is given to both "
                + previous.getName()
                + " and "
                + name
                + " in "
                + CLASSES_PATH
                + "; expected one class per id");
      }
    }
    return byId;
  }

  private static Class<?> load(String name, ClassLoader loader) {
    try {
      return Class.forName(name, false, loader);
    } catch (ClassNotFoundException e) {
      throw new IllegalArgumentException(
          "class "
              + name
              + " listed in "
              + CLASSES_PATH
              + " is not on the classpath; expected a binary class name such as"
              + " org.example.Outer$Inner or [F for float[]",
          e);
    }
  }

  private static int toInt(Config kryo, String key) {
    long bytes = kryo.getBytes(key);
    if (bytes > Integer.MAX_VALUE - 8) {
      throw new IllegalArgumentException(
          PATH + "." + key + " = " + bytes + " bytes exceeds the largest Java array");
    }
    return (int) bytes;
  }
}
