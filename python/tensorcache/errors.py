"""Exceptions of the TensorCache client; each message names the value at fault."""


class TensorCacheError(Exception):
    """Base class of every error this client raises."""


class BadRequest(TensorCacheError, ValueError):
    """The request was refused as invalid (unknown cache, index out of range, batch too large)."""


class LookupFailed(TensorCacheError):
    """The cluster could not serve a valid lookup (a computation failed or timed out)."""


class ProtocolError(TensorCacheError):
    """A peer broke the wire protocol, or speaks a version this client does not."""


class Unavailable(TensorCacheError, ConnectionError):
    """No endpoint answered."""


class Unauthorized(ProtocolError, PermissionError):
    """A node's lookup port refused this client's credentials: a wrong token, or none where the port
    needs one (its message says which). A refused client certificate shows as :class:`Unavailable`
    instead: TLS reports it as a failed connection."""
