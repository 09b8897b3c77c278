import Glibc

/// The folders and files `tab-server` needs on disk, checked with plain errno-based messages an operator
/// can act on (which path, which uid), never a Foundation error dump.
enum DataFolder {
    /// Creates `path` (and missing parents, owner-only) unless it exists, then checks it is a folder the
    /// process can write to. `name` says which setting chose it, e.g. `--data-dir`.
    /// - Throws: `ServiceOptions.Invalid` naming the path, and for permissions the uid that needs access.
    static func prepare(_ path: String, name: String) throws {
        var prefix = path.hasPrefix("/") ? "" : "."
        for component in path.split(separator: "/", omittingEmptySubsequences: true) where component != "." {
            prefix += "/" + component
            var info = stat()
            if stat(prefix, &info) == 0 {
                guard info.st_mode & S_IFMT == S_IFDIR else {
                    throw ServiceOptions.Invalid(description: prefix == canonical(path)
                        ? "\(name) \(path) is a file, not a folder"
                        : "\(name) \(path) cannot be created: \(prefix) is a file, not a folder")
                }
                continue
            }
            guard mkdir(prefix, 0o700) == 0 || errno == EEXIST else {
                let code = errno
                let parent = prefix.split(separator: "/").dropLast().joined(separator: "/")
                let parentPath = prefix.hasPrefix("/") ? "/" + parent : (parent.isEmpty ? "." : parent)
                throw ServiceOptions.Invalid(description: "cannot create \(name) \(path): " + explain(code, folder: parentPath))
            }
            chmod(prefix, 0o700)  // exactly owner-only, whatever the umask
        }
        guard faccessat(AT_FDCWD, path, W_OK | X_OK, AT_EACCESS) == 0 else {
            throw ServiceOptions.Invalid(description: "\(name) \(path) is not writable: " + explain(errno, folder: path))
        }
    }

    /// Refuses a database file that does not exist (the subcommands that only read never create one).
    static func requireDatabase(_ options: ServiceOptions) throws {
        let path = options.resolvedDatabasePath
        var info = stat()
        guard stat(path, &info) == 0 else {
            throw ServiceOptions.Invalid(description: "no database at \(path): pass the server's --data-dir (or --database); "
                + "token and backup never create a database")
        }
        guard info.st_mode & S_IFMT == S_IFREG else {
            throw ServiceOptions.Invalid(description: "the database \(path) is not a regular file")
        }
    }

    /// errno as an operator's sentence: permissions name the effective uid that needs write access.
    static func explain(_ code: Int32, folder: String) -> String {
        switch code {
        case EACCES, EPERM:
            let uid = geteuid()
            return "permission denied; make \(folder) writable by uid \(uid) (the user tab-server runs as)"
        case EROFS:
            return "\(folder) is on a read-only file system"
        default:
            return String(cString: strerror(code))
        }
    }

    private static func canonical(_ path: String) -> String {
        let parts = path.split(separator: "/", omittingEmptySubsequences: true).filter { $0 != "." }.joined(separator: "/")
        return path.hasPrefix("/") ? "/" + parts : "./" + parts
    }
}
