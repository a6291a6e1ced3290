public enum LookupFilters {
    public static let all: [FilterDeclaration] = []
}
