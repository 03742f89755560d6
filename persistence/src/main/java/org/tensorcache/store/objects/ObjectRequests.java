package org.tensorcache.store.objects;

import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.function.Consumer;
import software.amazon.awssdk.core.ResponseInputStream;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.model.GetObjectRequest;
import software.amazon.awssdk.services.s3.model.GetObjectResponse;
import software.amazon.awssdk.services.s3.model.ListObjectsV2Request;
import software.amazon.awssdk.services.s3.model.ListObjectsV2Response;
import software.amazon.awssdk.services.s3.model.NoSuchKeyException;
import software.amazon.awssdk.services.s3.model.PutObjectRequest;
import software.amazon.awssdk.services.s3.model.S3Exception;
import software.amazon.awssdk.services.s3.model.S3Object;

/**
 * The requests segments need, each tried again within the retry window: a create-only upload of a
 * file, a download to a file, a delete, and a paged listing of keys.
 */
final class ObjectRequests {
  private static final int PRECONDITION_FAILED = 412;

  private final S3Client client;
  private final Retry retry;
  private final String bucket;

  ObjectRequests(ObjectStorage storage, String bucket) {
    this.client = storage.client();
    this.retry = storage.retry();
    this.bucket = bucket;
  }

  /**
   * Uploads {@code file} as {@code key} unless an object is there ({@code If-None-Match: *}); false
   * when one is. After a retry, that one may be this upload's own first try.
   */
  boolean createIfAbsent(String key, Path file, String uri) throws IOException {
    long size = Files.size(file);
    return retry.call(
        "create of " + uri,
        () -> {
          PutObjectRequest put =
              PutObjectRequest.builder()
                  .bucket(bucket)
                  .key(key)
                  .ifNoneMatch("*")
                  .contentLength(size)
                  .contentType("application/octet-stream")
                  .build();
          try {
            client.putObject(put, RequestBody.fromFile(file));
            return true;
          } catch (S3Exception e) {
            if (e.statusCode() == PRECONDITION_FAILED) {
              return false;
            }
            throw e;
          }
        });
  }

  /**
   * Downloads {@code key} into {@code file} (created or truncated); false when there is no such
   * object. A body that ends early is tried again, not handed to the checks as a short segment.
   */
  boolean download(String key, Path file, String uri) throws IOException {
    return retry.call(
        "read of " + uri,
        () -> {
          GetObjectRequest get = GetObjectRequest.builder().bucket(bucket).key(key).build();
          try (ResponseInputStream<GetObjectResponse> in = client.getObject(get)) {
            Long expected = in.response().contentLength();
            long copied = copy(in, file, uri);
            if (expected != null && copied != expected) {
              throw new Retry.TransferException(
                  "read of " + uri + " ended at " + copied + " of " + expected + " bytes", null);
            }
            return true;
          } catch (NoSuchKeyException e) {
            return false;
          }
        });
  }

  /** Deletes {@code key}; deleting an object that is not there succeeds. */
  void delete(String key, String uri) throws IOException {
    retry.call(
        "delete of " + uri,
        () -> {
          client.deleteObject(d -> d.bucket(bucket).key(key));
          return null;
        });
  }

  /** Calls {@code each} with every key that starts with {@code prefix}, a page at a time. */
  void list(String prefix, int pageSize, String uri, Consumer<String> each) throws IOException {
    String token = null;
    do {
      ListObjectsV2Request.Builder request =
          ListObjectsV2Request.builder().bucket(bucket).prefix(prefix).maxKeys(pageSize);
      if (token != null) {
        request.continuationToken(token);
      }
      ListObjectsV2Request page = request.build();
      ListObjectsV2Response response =
          retry.call("listing of " + uri, () -> client.listObjectsV2(page));
      for (S3Object o : response.contents()) {
        each.accept(o.key());
      }
      token = Boolean.TRUE.equals(response.isTruncated()) ? response.nextContinuationToken() : null;
    } while (token != null);
  }

  /** Copies the body; a failure reading it (the network) is worth a retry, writing it is not. */
  private static long copy(InputStream in, Path file, String uri) throws IOException {
    byte[] buffer = new byte[1 << 16];
    long copied = 0;
    try (FileChannel out =
        FileChannel.open(
            file,
            StandardOpenOption.CREATE,
            StandardOpenOption.WRITE,
            StandardOpenOption.TRUNCATE_EXISTING)) {
      while (true) {
        int n;
        try {
          n = in.read(buffer);
        } catch (IOException e) {
          throw new Retry.TransferException(
              "read of " + uri + " broke off after " + copied + " bytes", e);
        }
        if (n < 0) {
          return copied;
        }
        ByteBuffer chunk = ByteBuffer.wrap(buffer, 0, n);
        while (chunk.hasRemaining()) {
          out.write(chunk);
        }
        copied += n;
      }
    }
  }
}
