import CFFmpeg
import GPUEncodeCore
import GPUEncodeSettings

/// What becomes of the input's tags: kept by default (container and per-stream), `--strip-metadata`
/// drops them (streams keep `language`, which players use to choose a track), `--no-location`
/// drops every key containing "location" (a phone's GPS position: `location`, `location-eng`,
/// `com.apple.quicktime.location.ISO6709`, Matroska's `LOCATION`), and `--metadata KEY=VALUE` sets
/// container tags afterwards (an empty value deletes the key, as ffmpeg's -metadata does).
/// Tags the muxer writes itself (`encoder`, MP4's `major_brand`, handler names) are not the input's
/// and are not touched.
package struct MetadataPolicy {
    package var strip = false
    package var dropLocation = false
    package var entries: [MetadataEntry] = []

    package init(_ settings: EncoderSettings) {
        strip = settings.stripMetadata
        dropLocation = settings.dropLocation
        entries = settings.metadata
    }

    /// Whether the input's tag `key` is written to the output (on a stream when `stream`).
    package static func keeps(_ key: String, stream: Bool, strip: Bool, dropLocation: Bool) -> Bool {
        if dropLocation && isLocation(key) { return false }
        if strip { return stream && key.lowercased() == "language" }
        return true
    }

    package static func isLocation(_ key: String) -> Bool {
        key.lowercased().contains("location")
    }

    /// A stream's tags, filtered.
    package func copyStream(from source: OpaquePointer?, to destination: inout OpaquePointer?) {
        copy(source, to: &destination, stream: true)
    }

    /// The container's tags, filtered, then `--metadata`.
    package func copyContainer(from source: OpaquePointer?, to destination: inout OpaquePointer?) {
        copy(source, to: &destination, stream: false)
        for entry in entries {
            av_dict_set(&destination, entry.key, entry.value.isEmpty ? nil : entry.value, 0)
        }
    }

    private func copy(_ source: OpaquePointer?, to destination: inout OpaquePointer?, stream: Bool) {
        var entry: UnsafeMutablePointer<AVDictionaryEntry>?
        while let next = av_dict_get(source, "", entry, AV_DICT_IGNORE_SUFFIX) {
            entry = next
            let key = String(cString: next.pointee.key)
            if MetadataPolicy.keeps(key, stream: stream, strip: strip, dropLocation: dropLocation) {
                av_dict_set(&destination, next.pointee.key, next.pointee.value, 0)
            }
        }
    }

    /// Container keys FFmpeg 5.1's MP4 muxer writes (iTunes-style `ilst` atoms, `©xyz` for location,
    /// the movie header's creation time); others are silently left out. `encoder` is the muxer's own.
    package static let mp4Keys: Set<String> = ["title", "artist", "album_artist", "album", "composer", "date", "comment", "genre",
                                       "copyright", "grouping", "lyrics", "description", "synopsis", "show", "episode_id",
                                       "network", "keywords", "track", "disc", "compilation", "media_type", "hd_video",
                                       "gapless_playback", "location", "creation_time"]
    /// The same for QuickTime (.mov): its `udta` atoms.
    package static let movKeys: Set<String> = ["title", "artist", "album", "date", "comment", "genre", "copyright", "make", "model",
                                       "location", "creation_time"]

    /// One warning per `--metadata` key the output container will not write (MP4 and QuickTime
    /// write a fixed set; Matroska writes any key).
    package func unwritten(in container: AudioContainer) -> [String] {
        let written: Set<String>
        switch container {
        case .mp4: written = MetadataPolicy.mp4Keys
        case .mov: written = MetadataPolicy.movKeys
        default: return []
        }
        return entries.filter { !$0.value.isEmpty && !written.contains($0.key.lowercased()) }.map {
            "--metadata \($0.key): .\(container.name) has no place for this key, so it is not written (.mkv writes any key)"
        }
    }
}
