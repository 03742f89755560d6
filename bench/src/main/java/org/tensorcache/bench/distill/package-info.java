/** A distillation teacher's per-token top-K output: how compactly it is kept, and how exactly. */
package org.tensorcache.bench.distill;
