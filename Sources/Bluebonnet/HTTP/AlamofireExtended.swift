/// A namespace for Bluebonnet's additions to Foundation types, reached through `.af` as in Alamofire.
public struct AlamofireExtension<ExtendedType> {
    /// The extended instance or type.
    public private(set) var type: ExtendedType

    /// Wraps an instance or type.
    ///
    /// - Parameter type: The value to extend.
    public init(_ type: ExtendedType) {
        self.type = type
    }
}

/// Types that expose Bluebonnet's additions through `.af`.
public protocol AlamofireExtended {
    /// The type being extended.
    associatedtype ExtendedType

    /// Static Bluebonnet extension point.
    static var af: AlamofireExtension<ExtendedType>.Type { get set }
    /// Instance Bluebonnet extension point.
    var af: AlamofireExtension<ExtendedType> { get set }
}

extension AlamofireExtended {
    /// Static Bluebonnet extension point.
    public static var af: AlamofireExtension<Self>.Type {
        get { AlamofireExtension<Self>.self }
        set {}
    }

    /// Instance Bluebonnet extension point.
    public var af: AlamofireExtension<Self> {
        get { AlamofireExtension(self) }
        set {}
    }
}
