/// A configuration or environment problem that stops start-up with a clear message for the operator
/// (an unusable folder, a database another process holds, a bad flag). `ServiceOptions.Invalid` is this type.
package struct ConfigurationError: Error, Sendable, CustomStringConvertible {
    package let description: String

    package init(description: String) {
        self.description = description
    }
}
