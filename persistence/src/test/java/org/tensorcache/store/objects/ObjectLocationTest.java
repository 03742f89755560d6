package org.tensorcache.store.objects;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import java.net.URI;
import java.time.Duration;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.core.exception.SdkClientException;
import software.amazon.awssdk.services.s3.model.S3Exception;

/** Locations, settings and which failures are tried again: no server needed. */
class ObjectLocationTest {
  @Test
  void locationsParseWithOrWithoutATrailingSlash() {
    ObjectLocation root = ObjectLocation.parse("s3://my-bucket");
    assertEquals(new ObjectLocation("my-bucket", ""), root);
    assertEquals("range-000001.safetensors", root.key("range-000001.safetensors"));

    ObjectLocation nested = ObjectLocation.parse("s3://my-bucket/caches/dpo");
    assertEquals(ObjectLocation.parse("s3://my-bucket/caches/dpo/"), nested);
    assertEquals("caches/dpo/", nested.prefix());
    assertEquals("s3://my-bucket/caches/dpo/", nested.toString());
    assertEquals("caches/dpo/abc/", nested.resolve("abc").prefix());
    assertEquals("s3://my-bucket/caches/dpo/x", nested.uriOf("x"));
    assertTrue(ObjectLocation.isObjectUri("s3://b/x"));
    assertFalse(ObjectLocation.isObjectUri("./data/segments"));
  }

  @Test
  void badLocationsAreRejectedNamingThem() {
    for (String bad :
        new String[] {"/data/x", "s3://", "s3://B", "s3://ab", "s3://bucket//x", "s3:///x"}) {
      IllegalArgumentException e =
          assertThrows(IllegalArgumentException.class, () -> ObjectLocation.parse(bad), bad);
      assertTrue(e.getMessage().contains("'" + bad + "'"), e.getMessage());
    }
    assertThrows(
        IllegalArgumentException.class, () -> ObjectLocation.parse("s3://b-1").resolve("a/b"));
  }

  @Test
  void settingsComeFromTheReferenceConfigAndAreChecked() {
    ObjectStoreSettings fromConfig =
        ObjectStoreSettings.fromConfig(
            ConfigFactory.parseString(
                    "tensorcache.object-storage { endpoint = \"http://127.0.0.1:9000\","
                        + " region = eu-west-1, list-page-size = 7 }")
                .withFallback(ConfigFactory.defaultReference()));
    assertEquals(Optional.of(URI.create("http://127.0.0.1:9000")), fromConfig.endpoint());
    assertEquals("eu-west-1", fromConfig.region());
    assertEquals(7, fromConfig.listPageSize());
    assertEquals(Duration.ofSeconds(60), fromConfig.retryWindow());

    ObjectStoreSettings d = ObjectStoreSettings.defaults();
    assertThrows(IllegalArgumentException.class, () -> d.withListPageSize(1001));
    assertThrows(IllegalArgumentException.class, () -> d.withEndpoint(URI.create("ftp://h:1")));
    assertThrows(
        IllegalArgumentException.class,
        () -> d.withRetry(Duration.ofSeconds(1), Duration.ofSeconds(2), Duration.ofSeconds(1)));
  }

  @Test
  void onlyTransientFailuresAreTriedAgain() {
    assertTrue(Retry.isTransient(reply(503, "SlowDown")));
    assertTrue(Retry.isTransient(reply(500, "InternalError")));
    assertTrue(Retry.isTransient(reply(409, "ConditionalRequestConflict")));
    assertTrue(Retry.isTransient(reply(400, "RequestTimeout")));
    assertFalse(Retry.isTransient(reply(403, "AccessDenied")));
    assertFalse(Retry.isTransient(reply(404, "NoSuchBucket")));
    assertTrue(
        Retry.isTransient(
            SdkClientException.create("connect", new java.net.ConnectException("refused"))));
    assertFalse(Retry.isTransient(SdkClientException.create("Unable to load credentials")));
  }

  private static S3Exception reply(int status, String code) {
    return (S3Exception)
        S3Exception.builder()
            .statusCode(status)
            .awsErrorDetails(
                software.amazon.awssdk.awscore.exception.AwsErrorDetails.builder()
                    .errorCode(code)
                    .build())
            .message(code)
            .build();
  }
}
