/**
 * Transport security of a node: the checks a node runs on its TLS files and transport before its
 * ActorSystem starts, Artery's TLS engine with the peer's hostname verified, and the cluster's
 * certificate authority that makes node and client certificates.
 */
package org.tensorcache.launch.tls;
