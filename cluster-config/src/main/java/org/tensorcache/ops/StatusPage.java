package org.tensorcache.ops;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpHandler;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;

/**
 * Serves the status page at {@code /} (one self-contained HTML page: inline CSS and script, no
 * other request but its data) and its data at {@code /status.json}, beside the metrics. The page
 * comes with the data of the moment in it, so it shows something before its first refresh; then it
 * asks for the data every second.
 */
final class StatusPage implements HttpHandler {
  /** Where the page's data goes in the page. */
  private static final String INITIAL = "/*INITIAL*/null";

  private final StatusJson status;
  private final String page;

  StatusPage(StatusJson status) {
    this.status = status;
    try (InputStream in = StatusPage.class.getResourceAsStream("status.html")) {
      this.page = new String(in.readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException("the status page is missing from the class path", e);
    }
    if (!page.contains(INITIAL)) {
      throw new IllegalStateException("status.html has no " + INITIAL);
    }
  }

  @Override
  public void handle(HttpExchange exchange) throws IOException {
    try (exchange) {
      String method = exchange.getRequestMethod();
      if (!method.equals("GET") && !method.equals("HEAD")) {
        send(exchange, 405, "text/plain", "only GET and HEAD\n");
        return;
      }
      switch (exchange.getRequestURI().getPath()) {
        case "/" -> send(exchange, 200, "text/html", html());
        case "/status.json" ->
            send(exchange, 200, "application/json", StatusJson.text(status.build()));
        default -> send(exchange, 404, "text/plain", "not found: /, /status.json, /metrics\n");
      }
    }
  }

  /** The page with the current data inlined (as a script literal: no closing tag can end it). */
  String html() {
    String data = StatusJson.text(status.build()).replace("<", "\\u003c");
    return page.replace(INITIAL, data);
  }

  private static void send(HttpExchange exchange, int code, String type, String body)
      throws IOException {
    byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
    var headers = exchange.getResponseHeaders();
    headers.set("Content-Type", type + "; charset=utf-8");
    headers.set("Cache-Control", "no-store");
    headers.set("X-Content-Type-Options", "nosniff");
    headers.set(
        "Content-Security-Policy",
        "default-src 'none'; connect-src 'self'; style-src 'unsafe-inline';"
            + " script-src 'unsafe-inline'");
    boolean head = exchange.getRequestMethod().equals("HEAD");
    exchange.sendResponseHeaders(code, head ? -1 : bytes.length);
    if (!head) {
      try (OutputStream out = exchange.getResponseBody()) {
        out.write(bytes);
      }
    }
  }
}
