/** Benchmarks that print their figures next to their references and write results files. */
package org.tensorcache.bench;
