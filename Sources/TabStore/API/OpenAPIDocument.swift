// Placeholder: replaced by scripts/embed-openapi from ../../../openapi.yaml.
enum OpenAPIDocument {
    static let yaml = ""
}
