/**
 * The {@code tensorcache} command line: its picocli commands ({@code demo}, {@code node}, {@code
 * status}, {@code fill}, {@code certs}) and what only they use, built on {@link
 * org.tensorcache.launch}.
 */
package org.tensorcache.cli;
