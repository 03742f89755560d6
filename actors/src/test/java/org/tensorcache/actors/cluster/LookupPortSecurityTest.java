package org.tensorcache.actors.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Random;
import javax.net.ssl.SSLException;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.cluster.typed.Cluster;
import org.apache.pekko.cluster.typed.Join;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.tensorcache.actors.TensorCache;
import org.tensorcache.actors.cache.TensorCacheNode;
import org.tensorcache.actors.client.RemoteLookupClient;
import org.tensorcache.actors.lookup.LookupFailedException;
import org.tensorcache.actors.lookup.LookupFrames;
import org.tensorcache.actors.lookup.LookupSecurity;
import org.tensorcache.actors.lookup.LookupWire;
import org.tensorcache.actors.lookup.SessionWire;
import org.tensorcache.actors.testing.RawConnection;
import org.tensorcache.actors.testing.TestCache;
import org.tensorcache.actors.testing.TestCluster;
import org.tensorcache.actors.testing.tls.TestCertificates;

/**
 * A lookup port with TLS (client certificates of its own client CA) and a token serves exactly the
 * reference values, lookups and sessions, to a client with both; a client without a certificate,
 * with one of another CA, with a wrong token or with none gets nothing served and changes nothing.
 */
class LookupPortSecurityTest {
  private static final String TOKEN = "s3cret-token-of-the-port";
  // long enough for a good client's first TLS handshake and AUTH on a loaded two-core machine
  // (at 1 s the port closed on them mid-handshake: a broken pipe), short enough to wait out
  private static final Duration HANDSHAKE_TIMEOUT = Duration.ofSeconds(4);

  @TempDir static Path dir;
  private static ActorTestKit kit;
  private static TestCache cache;
  private static float[][] reference;
  private static InetSocketAddress endpoint;
  private static Path nodeCa;
  private static TestCertificates.Issued client;
  private static TestCertificates.Issued rogue;

  @BeforeAll
  static void start() throws Exception {
    TestCertificates nodes = TestCertificates.ca("node-ca");
    TestCertificates clients = TestCertificates.ca("client-ca");
    nodeCa = nodes.writeCertificate(dir.resolve("node-ca.pem"));
    Path clientCa = clients.writeCertificate(dir.resolve("client-ca.pem"));
    TestCertificates.Issued node = nodes.issue("node", dir, false);
    client = clients.issue("trainer", dir, true);
    rogue = TestCertificates.ca("rogue-ca").issue("rogue", dir, false);
    Path token = Files.writeString(dir.resolve("token"), TOKEN + "\n");

    cache = new TestCache(dir.resolve("cache"), 96, 32);
    reference = cache.reference();
    String secured =
        String.format(
            "tensorcache.lookup.endpoint {\n port = 0\n handshake-timeout = %dms\n"
                + " token-file = \"%s\"\n tls { enabled = on\n certificate = \"%s\"\n"
                + " private-key = \"%s\"\n client-ca = \"%s\" } }",
            HANDSHAKE_TIMEOUT.toMillis(), token, node.certificate(), node.privateKey(), clientCa);
    kit = ActorTestKit.create("LookupPortSecurityTest", config(secured));
    TensorCacheNode tc = TensorCacheNode.get(kit.system());
    tc.register(cache.definition());
    TensorCache.start(kit.system());
    Cluster cluster = Cluster.get(kit.system());
    cluster.manager().tell(Join.create(cluster.selfMember().address()));
    endpoint = tc.endpointAddress().orElseThrow();
  }

  @AfterAll
  static void stop() {
    if (kit != null) {
      kit.shutdownTestKit();
    }
  }

  @Test
  void tlsAndTokenServeLookupsAndSessionsBitForBit() throws Exception {
    try (RemoteLookupClient c = RemoteLookupClient.connect(List.of(endpoint), TIMEOUT, good())) {
      assertEquals(cache.spec, c.spec(cache.cacheId()));
      Random random = new Random(3);
      for (int round = 0; round < 10; round++) {
        long[] indices = random.longs(1 + random.nextInt(64), 0, 96).toArray();
        assertBits(indices, c.lookup(cache.cacheId(), indices).values());
      }
    }
    try (RawConnection c = RawConnection.tls(endpoint, good())) {
      assertEquals(LookupWire.OK, c.send(LookupWire.encodeAuth(c.frames, TOKEN)).reply().status());
      assertEquals(0, session(c, SessionWire.OPEN, "tls-run", 0).body().getLong());
      for (long step = 0; step < 3; step++) {
        ByteBuffer r = session(c, SessionWire.NEXT, "tls-run", step).body();
        assertEquals(step, r.getLong());
        r.getLong(); // the epoch
        long[] indices = new long[r.getInt()];
        r.asLongBuffer().get(indices);
        r.position(r.position() + 8 * indices.length);
        Object[] values = new Object[reference.length];
        assertEquals(values.length, r.getShort());
        for (int f = 0; f < values.length; f++) {
          assertEquals(1, r.get(), "F32");
          float[] v = new float[r.getInt()];
          r.asFloatBuffer().get(v);
          r.position(r.position() + 4 * v.length);
          values[f] = v;
        }
        assertBits(indices, values);
      }
    }
  }

  @Test
  void aClientWithoutACertificateOfTheClientCaIsRefusedInTheHandshake() throws Exception {
    LookupSecurity noCertificate =
        LookupSecurity.builder().optTrust(nodeCa).optToken(TOKEN).build();
    LookupSecurity otherCa =
        LookupSecurity.builder()
            .optCertificate(rogue.certificate(), rogue.privateKey())
            .optTrust(nodeCa)
            .optToken(TOKEN)
            .build();
    for (LookupSecurity refused : List.of(noCertificate, otherCa)) {
      try (RemoteLookupClient c = RemoteLookupClient.connect(List.of(endpoint), TIMEOUT, refused)) {
        var e = assertThrows(LookupFailedException.class, () -> c.spec(cache.cacheId()));
        assertTrue(e.getMessage().contains("failed on every endpoint"), e.getMessage());
      }
      // TLS 1.3: the client's side of the handshake ends before the node has checked its
      // certificate, so the refusal comes as an alert instead of the reply
      try (RawConnection c = RawConnection.tls(endpoint, refused)) {
        // an alert, or a reset if it came first
        assertThrows(
            IOException.class, () -> c.send(LookupWire.encodeAuth(c.frames, TOKEN)).reply());
      }
    }
    // a client that does not trust the node's CA stops at the handshake on its side
    LookupSecurity distrusting =
        LookupSecurity.builder()
            .optCertificate(client.certificate(), client.privateKey())
            .optTrust(client.certificate())
            .build();
    assertThrows(SSLException.class, () -> RawConnection.tls(endpoint, distrusting));
    // plain TCP gets a TLS alert at most, never a reply
    try (Socket s = new Socket(endpoint.getAddress(), endpoint.getPort())) {
      s.setSoTimeout(10_000);
      LookupFrames frames = new LookupFrames();
      frames.send(LookupWire.encodeDescribe(frames, utf8(cache.cacheId())), s.getOutputStream());
      byte[] answer = readAll(s.getInputStream());
      assertTrue(answer.length < 16 && (answer.length == 0 || answer[0] == 0x15), "an alert");
    }
    assertServed();
  }

  @Test
  void aWrongTokenOrNoAuthFirstIsRefusedAndChangesNothing() throws Exception {
    try (RawConnection c = RawConnection.tls(endpoint, good())) {
      RawConnection.Reply reply = c.send(LookupWire.encodeAuth(c.frames, TOKEN + "x")).reply();
      assertEquals(LookupWire.PROTOCOL, reply.status());
      assertEquals("unauthorized: wrong token", reply.message());
      assertTrue(c.closedWithin(Duration.ofSeconds(5)));
    }
    String notFirst =
        "unauthorized: this port needs an AUTH request (op 6, protocol version 3) with its token"
            + " first";
    try (RawConnection c = RawConnection.tls(endpoint, good())) {
      RawConnection.Reply reply = session(c, SessionWire.OPEN, "sneaky-run", 0);
      assertEquals(LookupWire.PROTOCOL, reply.status());
      assertEquals(notFirst, reply.message());
      assertTrue(c.closedWithin(Duration.ofSeconds(5)));
    }
    try (RawConnection c = RawConnection.tls(endpoint, good())) { // an AUTH of version 2
      ByteBuffer auth = LookupWire.encodeAuth(c.frames, TOKEN);
      auth.put(4, LookupWire.VERSION_2);
      RawConnection.Reply reply = c.send(auth).reply();
      assertEquals(notFirst, reply.message());
    }
    try (RemoteLookupClient wrong =
        RemoteLookupClient.connect(
            List.of(endpoint),
            TIMEOUT,
            LookupSecurity.builder()
                .optCertificate(client.certificate(), client.privateKey())
                .optTrust(nodeCa)
                .optToken("guess")
                .build())) {
      var e = assertThrows(LookupFailedException.class, () -> wrong.spec(cache.cacheId()));
      assertTrue(e.getMessage().contains("unauthorized: wrong token"), e.getMessage());
    }
    // the session the unauthenticated OPEN asked for was never opened
    try (RawConnection c = RawConnection.tls(endpoint, good())) {
      c.send(LookupWire.encodeAuth(c.frames, TOKEN)).reply();
      RawConnection.Reply next = session(c, SessionWire.NEXT, "sneaky-run", 0);
      assertEquals(LookupWire.BAD_REQUEST, next.status(), next.message());
    }
    assertServed();
  }

  @Test
  void theHandshakeAndTheAuthAreDueWithinTheHandshakeTimeout() throws Exception {
    try (RawConnection tcp = RawConnection.plain(endpoint);
        RawConnection tls = RawConnection.tls(endpoint, good())) {
      for (RawConnection c : List.of(tcp, tls)) {
        Duration closed = c.timeToClose(Duration.ofSeconds(10));
        assertTrue(
            closed.compareTo(HANDSHAKE_TIMEOUT.plusSeconds(3)) < 0,
            "closed after " + closed + ", handshake timeout " + HANDSHAKE_TIMEOUT);
      }
    }
  }

  @Test
  void startUpFailsNamingAMissingFile() {
    Path missing = dir.resolve("no-such-ca.pem");
    String conf =
        String.format(
            "tensorcache.lookup.endpoint { port = 0\n tls { enabled = on\n certificate = \"%s\"\n"
                + " private-key = \"%s\"\n client-ca = \"%s\" } }",
            client.certificate(), client.privateKey(), missing);
    ActorTestKit broken = ActorTestKit.create("LookupPortSecurityTestBroken", config(conf));
    try {
      TensorCacheNode.get(broken.system()).register(cache.definition());
      var e = assertThrows(UncheckedIOException.class, () -> TensorCache.start(broken.system()));
      assertTrue(e.getMessage().contains("CA certificate " + missing), e.getMessage());
    } finally {
      broken.shutdownTestKit();
    }
  }

  private static final Duration TIMEOUT = Duration.ofSeconds(30);

  private static Config config(String extra) {
    return ConfigFactory.parseString(extra)
        .withFallback(
            TestCluster.config(dir.resolve("node-" + extra.hashCode()), "\"compute\", \"lookup\""));
  }

  private static LookupSecurity good() throws IOException {
    return LookupSecurity.builder()
        .optCertificate(client.certificate(), client.privateKey())
        .optTrust(nodeCa)
        .optToken(TOKEN)
        .build();
  }

  /** A client with the right credentials is served. */
  private static void assertServed() throws IOException {
    try (RemoteLookupClient c = RemoteLookupClient.connect(List.of(endpoint), TIMEOUT, good())) {
      long[] indices = {0, 95, 40};
      assertBits(indices, c.lookup(cache.cacheId(), indices).values());
    }
  }

  private static RawConnection.Reply session(RawConnection c, byte op, String run, long step)
      throws IOException {
    return c.send(
            SessionWire.encode(
                c.frames,
                LookupWire.VERSION_3,
                op,
                utf8(cache.cacheId()),
                new SessionWire.Args(run, 0, 1, 9, 8, step)))
        .reply();
  }

  private static void assertBits(long[] indices, Object[] values) {
    for (int f = 0; f < reference.length; f++) {
      float[] got = (float[]) values[f];
      for (int i = 0; i < indices.length; i++) {
        assertEquals(
            Float.floatToRawIntBits(reference[f][(int) indices[i]]),
            Float.floatToRawIntBits(got[i]),
            "field " + f + " of index " + indices[i]);
      }
    }
  }

  private static byte[] readAll(InputStream in) {
    try {
      return in.readAllBytes();
    } catch (IOException e) {
      return new byte[0]; // reset
    }
  }

  private static byte[] utf8(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }
}
