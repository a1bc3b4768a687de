import ArgumentParser

/// `--pretty`, in httpie's spelling.
enum PrettyStyle: String, CaseIterable, ExpressibleByArgument {
    case all
    case colors
    case format
    case none
}

/// `--style`: the colours of the output, as httpie's themes give them. `auto` uses the terminal's own 16 colours; the
/// others are 256-colour palettes after the Pygments themes of the same names; `bw` is bold and plain only.
struct ColorStyle: ExpressibleByArgument, Equatable {
    let name: String
    /// SGR parameters for each part of the output.
    let key, string, number, literal, headerName, version, method, success, redirect, failure: String

    static let auto = ColorStyle(
        name: "auto", key: "34", string: "33", number: "36", literal: "35", headerName: "36", version: "34",
        method: "1", success: "32", redirect: "33", failure: "31")
    static let monokai = ColorStyle(
        name: "monokai", key: "38;5;197", string: "38;5;186", number: "38;5;141", literal: "38;5;81",
        headerName: "38;5;148", version: "38;5;81", method: "1;38;5;197", success: "38;5;148", redirect: "38;5;208",
        failure: "38;5;197")
    static let solarized = ColorStyle(
        name: "solarized", key: "38;5;33", string: "38;5;37", number: "38;5;125", literal: "38;5;166",
        headerName: "38;5;33", version: "38;5;61", method: "1;38;5;64", success: "38;5;64", redirect: "38;5;136",
        failure: "38;5;160")
    static let fruity = ColorStyle(
        name: "fruity", key: "38;5;33", string: "38;5;34", number: "38;5;33", literal: "38;5;208",
        headerName: "38;5;208", version: "38;5;201", method: "1;38;5;201", success: "38;5;34", redirect: "38;5;208",
        failure: "38;5;196")
    static let blackAndWhite = ColorStyle(
        name: "bw", key: "1", string: "0", number: "0", literal: "0", headerName: "1", version: "1", method: "1",
        success: "1", redirect: "1", failure: "1")

    static let all = [auto, monokai, solarized, fruity, blackAndWhite]

    /// Every name httpie 3.2.4's `--style` takes, each with the palette of bonnet's that is nearest: the dark themes
    /// as monokai, the light ones as solarized (which reads on either background), the grey ones as bw, httpie's own
    /// `pie` themes as the terminal's colours.
    static let httpieNames: [String: ColorStyle] = {
        var names: [String: ColorStyle] = [:]
        for name in ["auto", "pie", "pie-dark", "pie-light"] { names[name] = auto }
        for name in [
            "monokai", "coffee", "dracula", "github-dark", "gruvbox-dark", "inkpot", "lightbulb", "material", "native",
            "night-owl", "nord", "nord-darker", "one-dark", "paraiso-dark", "rrt", "stata-dark", "vim", "zenburn",
        ] {
            names[name] = monokai
        }
        for name in [
            "solarized", "solarized-dark", "solarized-light", "abap", "arduino", "autumn", "borland", "colorful",
            "default", "emacs", "friendly", "gruvbox-light", "igor", "lilypond", "lovelace", "manni", "murphy",
            "paraiso-light", "pastie", "perldoc", "rainbow_dash", "sas", "staroffice", "stata-light", "tango", "trac",
            "vs", "xcode",
        ] {
            names[name] = solarized
        }
        names["fruity"] = fruity
        for name in ["bw", "algol", "algol_nu", "friendly_grayscale"] { names[name] = blackAndWhite }
        return names
    }()

    /// The style `name` names, as `--style` reads it: a name httpie takes, exactly as httpie spells it; any other is
    /// refused, as httpie refuses it, with the names it could have been.
    static func named(_ name: String) throws -> ColorStyle {
        guard let style = ColorStyle(argument: name) else {
            let names = allValueStrings.map { "'\($0)'" }.joined(separator: ", ")
            throw ValidationError("--style: '\(name)' is not a style (choose from \(names))")
        }
        return style
    }

    /// A name httpie takes, exactly as httpie spells it; any other is refused, as httpie refuses it.
    init?(argument: String) {
        guard let style = Self.httpieNames[argument] else { return nil }
        self = style
    }

    private init(
        name: String, key: String, string: String, number: String, literal: String, headerName: String,
        version: String, method: String, success: String, redirect: String, failure: String
    ) {
        self.name = name
        self.key = key
        self.string = string
        self.number = number
        self.literal = literal
        self.headerName = headerName
        self.version = version
        self.method = method
        self.success = success
        self.redirect = redirect
        self.failure = failure
    }

    static var allValueStrings: [String] { httpieNames.keys.sorted() }
    var defaultValueDescription: String { name }
}
