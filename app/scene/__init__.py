"""The 3D view and what it draws: the GL window and its container, the skeleton, the skin,
the compared codecs' layer, the colour legend, and pictures of it (screenshot)."""
