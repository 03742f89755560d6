/**
 * What the benchmarks write: results files (indented JSON with the machine they ran on) and PNG bar
 * charts of each figure beside its reference.
 */
package org.tensorcache.bench.report;
