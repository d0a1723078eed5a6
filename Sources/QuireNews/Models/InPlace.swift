/// A stored property of zero bytes that models with many strings carry (`private var inPlace =
/// InPlace()`), read and written by no one.
///
/// Why: a struct keeps the compiler's memberwise initializer only while no initializer is declared
/// in its body, and a public one declared in an extension may not share its signature. With this
/// property the memberwise initializer has a signature of its own, so the public initializer can
/// delegate to it. That matters for speed: an initializer that assigns `var` properties one by one
/// builds the value and then copies it out (a retain and a release per string, and the copy of
/// every decoded `Article` cost about 6% of `decode.quire`); the memberwise one builds it in place.
struct InPlace: Hashable, Sendable {}
