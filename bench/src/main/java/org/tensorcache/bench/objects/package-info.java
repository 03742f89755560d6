/** Segments in S3-compatible object storage next to a local directory and plain objects. */
package org.tensorcache.bench.objects;
