public enum StylizeFilters {
    public static let all: [FilterDeclaration] = []
}
