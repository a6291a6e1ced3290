# gpuencode on Debian 12, from the package: run `make deb` (dist/gpuencode_*_amd64.deb) first.
#   docker build -t gpuencode .
#   docker run --rm -v "$PWD:/work" -w /work gpuencode in.mp4 out.mp4 --preset sepia
# On NVIDIA (NVIDIA Container Toolkit): docker run --gpus all ... ; the capabilities below make the
# toolkit mount the driver's EGL ("graphics") and NVDEC/NVENC ("video") libraries.
FROM debian:12-slim
ENV NVIDIA_DRIVER_CAPABILITIES=graphics,video,compute,utility
WORKDIR /tmp/gpuencode-deb
COPY dist/gpuencode_*_amd64.deb ./
RUN apt-get update \
 && apt-get install -y --no-install-recommends ./gpuencode_*_amd64.deb \
 && rm -rf /var/lib/apt/lists/* /tmp/gpuencode-deb
WORKDIR /
ENTRYPOINT ["gpuencode"]
