public enum CustomFilters {
    public static let all: [FilterDeclaration] = []
}
