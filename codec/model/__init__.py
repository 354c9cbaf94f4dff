"""The data model: clips, skeletons, meshes, units, quaternions, sampling. Imports no codec."""
