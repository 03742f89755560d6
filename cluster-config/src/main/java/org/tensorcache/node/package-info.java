/**
 * Starting TensorCache nodes: configuration profiles, the embedded single-JVM node, cluster nodes.
 */
package org.tensorcache.node;
