/**
 * The real servers that tests, chaos runs and benchmarks start as processes (S3Proxy, PostgreSQL,
 * dnsmasq, redis), the {@link org.tensorcache.testing.Reaper} that ends them and removes their
 * directories when the JVM ends however it ends, and {@code s3-local} for trying object storage on
 * one machine. Not part of the distribution.
 */
package org.tensorcache.testing;
