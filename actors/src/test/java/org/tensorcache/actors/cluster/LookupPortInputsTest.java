package org.tensorcache.actors.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
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
import org.tensorcache.actors.lookup.LookupInputs;
import org.tensorcache.actors.lookup.LookupReplies;
import org.tensorcache.actors.lookup.LookupSecurity;
import org.tensorcache.actors.lookup.LookupWire;
import org.tensorcache.actors.testing.RawConnection;
import org.tensorcache.actors.testing.TestCache;
import org.tensorcache.actors.testing.TestCluster;

/**
 * A node's lookup port serves each cache's recorded inputs (INPUTS, protocol version 4) as its
 * definition holds them, {@code {}} for a cache that recorded none, refuses an unknown cache as
 * DESCRIBE does, and on a port with a token only after the AUTH; a node of versions 1 to 3 is named
 * as one that cannot serve them.
 */
class LookupPortInputsTest {
  private static final String TOKEN = "inputs-token";
  private static final Duration TIMEOUT = Duration.ofSeconds(30);

  /** What the filled cache recorded, with characters JSON escapes and some it does not. */
  private static final Map<String, String> RECORDED =
      Map.of(
          "dataset", "prefs \"v2\".jsonl",
          "model_dir", "/models/Größe\\tiny\n",
          "max_length", "0",
          "tokenizer_sha256", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");

  @TempDir static Path dir;
  private static ActorTestKit kit;
  private static TestCache recorded;
  private static TestCache bare;
  private static InetSocketAddress endpoint;

  @BeforeAll
  static void start() throws Exception {
    Path token = Files.writeString(dir.resolve("token"), TOKEN + "\n");
    recorded = new TestCache(dir.resolve("recorded"), 64, 32);
    bare = new TestCache(dir.resolve("bare"), 48, 16);
    kit =
        ActorTestKit.create(
            "LookupPortInputsTest",
            ConfigFactory.parseString(
                    "tensorcache.lookup.endpoint { port = 0\n token-file = \"" + token + "\" }")
                .withFallback(TestCluster.config(dir.resolve("node"), "\"compute\", \"lookup\"")));
    TensorCacheNode node = TensorCacheNode.get(kit.system());
    node.register(recorded.definition().withInputs(RECORDED));
    node.register(bare.definition());
    TensorCache.start(kit.system());
    Cluster cluster = Cluster.get(kit.system());
    cluster.manager().tell(Join.create(cluster.selfMember().address()));
    endpoint = node.endpointAddress().orElseThrow();
  }

  @AfterAll
  static void stop() {
    if (kit != null) {
      kit.shutdownTestKit();
    }
  }

  private static LookupSecurity token() throws IOException {
    return LookupSecurity.builder().optToken(TOKEN).build();
  }

  @Test
  void servesWhatTheDefinitionRecordedAndEmptyForACacheThatRecordedNone() throws IOException {
    try (RemoteLookupClient c = RemoteLookupClient.connect(List.of(endpoint), TIMEOUT, token())) {
      Map<String, String> inputs = c.inputs(recorded.cacheId());
      assertEquals(RECORDED, inputs);
      assertEquals(
          new TreeMap<>(RECORDED).keySet().stream().toList(), List.copyOf(inputs.keySet()));
      assertEquals(Map.of(), c.inputs(bare.cacheId()));

      var describe = assertThrows(IllegalArgumentException.class, () -> c.spec("no-such-cache"));
      var inputsOfNone =
          assertThrows(IllegalArgumentException.class, () -> c.inputs("no-such-cache"));
      assertTrue(
          inputsOfNone.getMessage().startsWith("unknown cache 'no-such-cache', expected one of"));
      assertEquals(describe.getMessage(), inputsOfNone.getMessage());
      // the connection answered in step: it still serves
      assertEquals(recorded.spec, c.spec(recorded.cacheId()));
      assertEquals(RECORDED, c.inputs(recorded.cacheId()));
    }
  }

  @Test
  void theReplyIsTheCompactSortedJsonOfTheDocument() throws Exception {
    try (RawConnection c = RawConnection.plain(endpoint)) {
      assertEquals(LookupWire.OK, c.send(LookupWire.encodeAuth(c.frames, TOKEN)).reply().status());
      RawConnection.Reply reply =
          c.send(LookupInputs.encodeRequest(c.frames, utf8(recorded.cacheId()))).reply();
      assertEquals(LookupWire.OK, reply.status());
      // written out by hand: keys in order, no white space, only '"', '\' and controls escaped
      assertEquals(
          "{\"dataset\":\"prefs \\\"v2\\\".jsonl\",\"max_length\":\"0\","
              + "\"model_dir\":\"/models/Größe\\\\tiny\\n\","
              + "\"tokenizer_sha256\":"
              + "\"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855\"}",
          reply.message());
      RawConnection.Reply none =
          c.send(LookupInputs.encodeRequest(c.frames, utf8(bare.cacheId()))).reply();
      assertEquals("{}", none.message());
    }
  }

  @Test
  void onAPortWithATokenInputsComeOnlyAfterTheAuth() throws Exception {
    try (RawConnection c = RawConnection.plain(endpoint)) {
      RawConnection.Reply reply =
          c.send(LookupInputs.encodeRequest(c.frames, utf8(recorded.cacheId()))).reply();
      assertEquals(LookupWire.PROTOCOL, reply.status());
      assertEquals(
          "unauthorized: this port needs an AUTH request (op 6, protocol version 3) with its token"
              + " first",
          reply.message());
      assertTrue(c.closedWithin(Duration.ofSeconds(5)));
    }
    try (RemoteLookupClient none = RemoteLookupClient.connect(List.of(endpoint), TIMEOUT)) {
      var e = assertThrows(LookupFailedException.class, () -> none.inputs(recorded.cacheId()));
      assertTrue(e.getMessage().contains("unauthorized: this port needs"), e.getMessage());
    }
  }

  @Test
  void inputsInAnOlderVersionAreAProtocolError() throws Exception {
    try (RawConnection c = RawConnection.plain(endpoint)) {
      c.send(LookupWire.encodeAuth(c.frames, TOKEN)).reply();
      ByteBuffer request = LookupInputs.encodeRequest(c.frames, utf8(recorded.cacheId()));
      request.put(4, LookupWire.VERSION_3);
      RawConnection.Reply reply = c.send(request).reply();
      assertEquals(LookupWire.PROTOCOL, reply.status());
      assertEquals(
          "op 7 in protocol version 3, expected 1 or 2 or a session op 3..5 or AUTH 6",
          reply.message());
      assertTrue(c.closedWithin(Duration.ofSeconds(5)));
    }
  }

  /**
   * A node of versions 1 to 3, as it answers a version-4 request (docs/wire-protocol.md, section
   * 15.3): PROTOCOL, then the connection closed.
   */
  @Test
  void aNodeOfVersions1To3IsNamedAsOneThatCannotServeInputs() throws Exception {
    try (ServerSocket old = new ServerSocket(0, 1, endpoint.getAddress())) {
      Thread node =
          new Thread(
              () -> {
                try (Socket s = old.accept()) {
                  DataInputStream in = new DataInputStream(s.getInputStream());
                  byte[] head = new byte[4];
                  in.readFully(head);
                  in.readFully(
                      new byte[ByteBuffer.wrap(head).order(ByteOrder.LITTLE_ENDIAN).getInt()]);
                  LookupFrames frames = new LookupFrames();
                  OutputStream out = s.getOutputStream();
                  frames.send(
                      LookupReplies.encodeError(
                          frames, LookupWire.PROTOCOL, "protocol version 4, expected 1, 2 or 3"),
                      out);
                } catch (IOException e) {
                  // the test fails on the client's side
                }
              });
      node.start();
      InetSocketAddress address = new InetSocketAddress(endpoint.getAddress(), old.getLocalPort());
      try (RemoteLookupClient c = RemoteLookupClient.connect(List.of(address), TIMEOUT)) {
        var e = assertThrows(LookupFailedException.class, () -> c.inputs("c"));
        assertTrue(
            e.getMessage()
                .contains(
                    "node "
                        + address
                        + " does not serve recorded inputs (protocol version 4); upgrade the node"),
            e.getMessage());
      }
      node.join();
    }
  }

  private static byte[] utf8(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }
}
