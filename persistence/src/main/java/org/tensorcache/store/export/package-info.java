/** A whole cache as one safetensors file that Python's {@code safetensors} package can load. */
package org.tensorcache.store.export;
