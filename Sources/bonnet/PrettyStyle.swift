import ArgumentParser

/// `--pretty`, in httpie's spelling.
enum PrettyStyle: String, CaseIterable, ExpressibleByArgument {
    case all
    case colors
    case format
    case none
}
