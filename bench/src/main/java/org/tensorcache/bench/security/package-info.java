/**
 * What transport security costs: lookups through the lookup port with TLS 1.3, client certificates
 * and a token next to plain TCP, and a cluster fill with Artery over TLS next to Artery TCP.
 */
package org.tensorcache.bench.security;
