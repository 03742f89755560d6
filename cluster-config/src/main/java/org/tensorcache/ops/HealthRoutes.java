package org.tensorcache.ops;

import static org.apache.pekko.http.javadsl.server.Directives.complete;
import static org.apache.pekko.http.javadsl.server.Directives.concat;
import static org.apache.pekko.http.javadsl.server.Directives.get;
import static org.apache.pekko.http.javadsl.server.Directives.onComplete;
import static org.apache.pekko.http.javadsl.server.Directives.path;

import java.util.concurrent.CompletionStage;
import java.util.function.Supplier;
import org.apache.pekko.actor.ExtendedActorSystem;
import org.apache.pekko.http.javadsl.model.StatusCodes;
import org.apache.pekko.http.javadsl.server.Route;
import org.apache.pekko.management.HealthCheckSettings;
import org.apache.pekko.management.javadsl.CheckResult;
import org.apache.pekko.management.javadsl.HealthChecks;
import org.apache.pekko.management.javadsl.ManagementRouteProvider;
import org.apache.pekko.management.javadsl.ManagementRouteProviderSettings;
import scala.util.Try;

/**
 * {@code /ready}, {@code /alive} and {@code /startup} on the management port, running the checks
 * configured under {@code pekko.management.health-checks}, as Pekko Management's own routes do, but
 * answering a failing check with 503 Service Unavailable (what load balancers and probes expect of
 * a node that should get no traffic) rather than 500.
 */
public final class HealthRoutes implements ManagementRouteProvider {
  private final HealthCheckSettings settings;
  private final HealthChecks checks;

  /** Made by Pekko Management ({@code pekko.management.http.routes.health-checks}). */
  public HealthRoutes(ExtendedActorSystem system) {
    this.settings =
        HealthCheckSettings.create(
            system.settings().config().getConfig("pekko.management.health-checks"));
    this.checks = new HealthChecks(system, settings);
  }

  @Override
  public Route routes(ManagementRouteProviderSettings routeSettings) {
    return concat(
        route(settings.readinessPath(), checks::readyResult),
        route(settings.livenessPath(), checks::aliveResult),
        route(settings.startupPath(), checks::startupResult));
  }

  private static Route route(String name, Supplier<CompletionStage<CheckResult>> check) {
    return path(name, () -> get(() -> onComplete(check, HealthRoutes::respond)));
  }

  private static Route respond(Try<CheckResult> result) {
    if (result.isFailure()) {
      return complete(
          StatusCodes.SERVICE_UNAVAILABLE,
          "Health Check Failed: " + result.failed().get().getMessage());
    }
    CheckResult r = result.get();
    return r.isSuccess()
        ? complete(StatusCodes.OK, "OK")
        : complete(StatusCodes.SERVICE_UNAVAILABLE, "Not Healthy: " + r.failure().orElse(""));
  }
}
