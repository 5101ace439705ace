"""Server-side encoders: a scripted Reply and its usage rendered in each provider's SSE format."""
