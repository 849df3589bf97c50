// Formats times the way the Kubernetes API stores metav1.Time: RFC 3339, whole seconds, UTC.

export function rfc3339(d: Date): string {
  return d.toISOString().replace(/\.\d{3}Z$/, 'Z');
}
