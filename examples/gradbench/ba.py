"""Bundle adjustment: the reprojection errors of p observations of n points
by m cameras, and the weight errors (GradBench's ba eval, a sparse
Jacobian). A camera is 11 numbers: a Rodrigues rotation (3), a center (3),
a focal length, a principal point (2) and two radial distortion
coefficients; observation i sees point ``obs[i, 1]`` from camera
``obs[i, 0]`` at ``feats[i]``, with weight ``w[i]``."""

import numpy as np

ROT, CENTER, FOCAL, X0, RAD = 0, 3, 6, 7, 9


def rodrigues_rotate_point(rot, X):
    sqtheta = np.sum(rot ** 2)
    if sqtheta != 0.0:
        theta = np.sqrt(sqtheta)
        costheta = np.cos(theta)
        sintheta = np.sin(theta)
        w = rot / theta
        w_cross_X = np.cross(w, X)
        tmp = np.dot(w, X) * (1.0 - costheta)
        return X * costheta + w_cross_X * sintheta + w * tmp
    else:
        return X + np.cross(rot, X)


def radial_distort(rad_params, proj):
    rsq = np.sum(proj ** 2)
    L = 1.0 + rad_params[0] * rsq + rad_params[1] * rsq * rsq
    return proj * L


def project(cam, X):
    Xcam = rodrigues_rotate_point(cam[ROT:ROT + 3], X - cam[CENTER:CENTER + 3])
    distorted = radial_distort(cam[RAD:RAD + 2], Xcam[0:2] / Xcam[2])
    return distorted * cam[FOCAL] + cam[X0:X0 + 2]


def compute_reproj_err(cam, X, w, feat):
    return w * (project(cam, X) - feat)


def ba_objective(cams, X, w, obs, feats):
    p = obs.shape[0]
    reproj_err = np.zeros((p, 2))
    for i in range(p):
        reproj_err[i] = compute_reproj_err(cams[obs[i, 0]], X[obs[i, 1]], w[i], feats[i])
    w_err = 1.0 - w ** 2
    return reproj_err, w_err
