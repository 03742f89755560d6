package org.tensorcache.store.objects;

import java.util.regex.Pattern;

/**
 * A place in object storage: a bucket and a key prefix, written {@code s3://bucket/prefix}. The
 * prefix is empty or ends with {@code /}, so that a name appended to it is one level below.
 */
public record ObjectLocation(String bucket, String prefix) {
  /** The scheme of object storage locations. */
  public static final String SCHEME = "s3://";

  // S3's rules for new buckets: 3 to 63 lower-case letters, digits, dots and hyphens
  private static final Pattern BUCKET = Pattern.compile("[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]");

  /** Checks the parts; see {@link #parse} for what is accepted. */
  public ObjectLocation {
    if (!BUCKET.matcher(bucket).matches()) {
      throw new IllegalArgumentException(
          "bucket '"
              + bucket
              + "' is not a bucket name, expected 3 to 63 lower-case letters, digits, dots and"
              + " hyphens");
    }
    if (!prefix.isEmpty() && (!prefix.endsWith("/") || prefix.startsWith("/"))) {
      throw new IllegalArgumentException(
          "key prefix '" + prefix + "' expected to be empty or to end, but not start, with '/'");
    }
    if (prefix.contains("//")) {
      throw new IllegalArgumentException(
          "key prefix '" + prefix + "' has an empty path segment, expected none");
    }
  }

  /** Whether {@code location} names object storage ({@code s3://...}) rather than a path. */
  public static boolean isObjectUri(String location) {
    return location.startsWith(SCHEME);
  }

  /**
   * The location {@code s3://bucket} or {@code s3://bucket/some/prefix} (a trailing {@code /} is
   * optional); anything else is rejected with a message naming it.
   */
  public static ObjectLocation parse(String uri) {
    if (!isObjectUri(uri)) {
      throw new IllegalArgumentException(
          "object storage location '" + uri + "' expected to start with " + SCHEME);
    }
    String rest = uri.substring(SCHEME.length());
    int slash = rest.indexOf('/');
    String bucket = slash < 0 ? rest : rest.substring(0, slash);
    String prefix = slash < 0 ? "" : rest.substring(slash + 1);
    if (!prefix.isEmpty() && !prefix.endsWith("/")) {
      prefix = prefix + "/";
    }
    try {
      return new ObjectLocation(bucket, prefix);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(
          "object storage location '" + uri + "' rejected: " + e.getMessage(), e);
    }
  }

  /** The location one level below this one, named {@code name} (no {@code /} inside). */
  public ObjectLocation resolve(String name) {
    if (name.isEmpty() || name.contains("/")) {
      throw new IllegalArgumentException(
          "name '" + name + "' below " + this + " expected to be non-empty and without '/'");
    }
    return new ObjectLocation(bucket, prefix + name + "/");
  }

  /** The key of the object named {@code name} at this location. */
  public String key(String name) {
    return prefix + name;
  }

  /** The URI of the object named {@code name} at this location. */
  public String uriOf(String name) {
    return SCHEME + bucket + "/" + key(name);
  }

  @Override
  public String toString() {
    return SCHEME + bucket + "/" + prefix;
  }
}
