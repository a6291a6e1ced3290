public enum GeometryFilters {
    public static let all: [FilterDeclaration] = []
}
