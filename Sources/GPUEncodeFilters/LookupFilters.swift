// Lookup tables and curves: a colour's new value read from a table built once per run from the
// parameters or a file (docs/luts.md).

public enum LookupFilters {
    public static let all: [FilterDeclaration] = [
        ToneCurveFilter.declaration,
        LookupFilter.declaration,
        Lut3DFilter.declaration,
    ]
}
