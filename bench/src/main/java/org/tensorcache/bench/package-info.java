/**
 * Benchmarks that print their figures next to their references and write results files. This is the
 * top package: {@code Bench} runs the parts of {@code Parts}; the parts in {@code byo}, {@code
 * micro}, {@code remote} and {@code scale} build on {@code fixture} and {@code report}, never on
 * this one.
 */
package org.tensorcache.bench;
