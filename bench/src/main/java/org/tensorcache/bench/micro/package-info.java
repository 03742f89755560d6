/**
 * JMH micro benchmarks of the hot paths (block merge, segment codec in memory, lookup-reply
 * serialization), each beside a reference doing the same work without the product's structure;
 * {@link org.tensorcache.bench.micro.MicroBench} runs them and writes the results.
 */
package org.tensorcache.bench.micro;
